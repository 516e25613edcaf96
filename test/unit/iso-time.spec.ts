import pino from 'pino';

import { isoTimeBySecond } from '../../src/common/logging/iso-time';

/** pino's isoTime at a given instant. */
function pinoAt(ms: number): string {
  jest.setSystemTime(ms);
  return pino.stdTimeFunctions.isoTime();
}

describe('isoTimeBySecond', () => {
  beforeAll(() => jest.useFakeTimers());
  afterAll(() => jest.useRealTimers());

  it("writes what pino's isoTime writes, across seconds, padding and a clock that steps back", () => {
    let now = 0;
    const time = isoTimeBySecond(() => now);
    const base = Date.UTC(2026, 10, 26, 13, 16, 43);
    const instants = [
      base,
      base + 1,
      base + 9,
      base + 10,
      base + 99,
      base + 100,
      base + 999,
      base + 1000,
      base + 1001,
      base + 59_999,
      base + 60_000,
      base - 1,
      base,
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      Date.UTC(2028, 1, 29, 12, 0, 0, 5),
      0,
      -1,
      -1001,
      Date.UTC(12000, 0, 1, 0, 0, 0, 7),
    ];
    for (const instant of instants) {
      now = instant;
      expect(time()).toBe(pinoAt(instant));
    }
  });

  it('keeps up with a clock that moves a millisecond at a time', () => {
    let now = Date.UTC(2026, 10, 26, 23, 59, 58, 990);
    const time = isoTimeBySecond(() => now);
    for (let step = 0; step < 2100; step++, now++) expect(time()).toBe(pinoAt(now));
  });

  it('reads Date.now when given no clock', () => {
    const time = isoTimeBySecond();
    const instant = Date.UTC(2026, 10, 26, 13, 16, 43, 250);
    jest.setSystemTime(instant);
    expect(time()).toBe(',"time":"2026-11-26T13:16:43.250Z"');
  });
});
