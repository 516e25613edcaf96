import { validateSync } from 'class-validator';

import {
  escapeInvisible,
  isDateTime,
  IsFullDate,
  isFullDate,
  isPlainText,
  trimEach,
} from '../../src/common/validation';

describe('isDateTime', () => {
  it.each([
    '1610-01-07T00:00:00Z',
    '2024-01-15T14:30:00.123Z',
    '2024-02-29T23:59:59+01:00',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59z',
    // Within years 1 to 9999 once in UTC, whatever the year written.
    '9999-12-31T23:59:59+14:00',
    '0001-01-01T00:00:00-14:00',
    '0000-12-31T23:00:00-14:00',
  ])('accepts %s', (value) => expect(isDateTime(value)).toBe(true));

  it.each([
    '2023-02-29T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:00',
    '2024-01-01',
    '0000-01-01T00:00:00Z',
    // The year 10000 and the year 0 in UTC, which toISOString() cannot print as RFC 3339.
    '9999-12-31T23:59:59-14:00',
    '9999-12-31T23:59:59.999-00:01',
    '0001-01-01T00:00:00+14:00',
    '0001-01-01T00:00:00.000+00:01',
    // Offsets out of range.
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00+01:60',
    'yesterday',
    '',
    1610,
    null,
  ])('refuses %p', (value) => expect(isDateTime(value)).toBe(false));
});

describe('isFullDate', () => {
  it.each(['2026-11-22', '2024-02-29', '0001-01-01', '9999-12-31'])('accepts %s', (value) =>
    expect(isFullDate(value)).toBe(true),
  );

  it.each([
    '2023-02-29',
    '2024-04-31',
    '2024-13-01',
    '2024-00-10',
    '0000-01-01',
    '2024-1-5',
    '20240105',
    '2024-01-01T00:00:00Z',
    ' 2024-01-01',
    '2024-01-01\n',
    '',
    20240101,
    null,
  ])('refuses %p', (value) => expect(isFullDate(value)).toBe(false));

  it('refuses, as a decorator, with a message that shows the format', () => {
    class Filter {
      @IsFullDate()
      since: unknown;
    }
    const refused = Object.assign(new Filter(), { since: '2024-02-30' });
    const accepted = Object.assign(new Filter(), { since: '2024-02-29' });
    expect(validateSync(refused).map((error) => error.constraints)).toEqual([
      { isFullDate: 'since must be a calendar day as YYYY-MM-DD, e.g. 2026-11-22' },
    ]);
    expect(validateSync(accepted)).toEqual([]);
  });
});

describe('trimEach', () => {
  it("trims an array's strings and leaves its other items, and anything not an array, to the validators", () => {
    expect(trimEach({ value: [' rocky ', '\tice', 7, null] })).toEqual(['rocky', 'ice', 7, null]);
    expect(trimEach({ value: ' rocky ' })).toBe(' rocky ');
    expect(trimEach({ value: { 0: ' a ' } })).toEqual({ 0: ' a ' });
  });
});

describe('isPlainText and escapeInvisible', () => {
  it('refuse what renders as nothing but keep the joiners and variation selectors that scripts and emoji need', () => {
    for (const hidden of ['Ma\u00ADrs', 'Mars\u{E0041}', 'Mars\u3164', 'Ma\u180Ers', 'Mars\uFFF9', 'a\u202Eb', 'a\nb'])
      expect({ hidden, plain: isPlainText(hidden) }).toEqual({ hidden, plain: false });
    for (const shown of ['👩\u200D🚀', 'کره\u200Cی', '❤\uFE0F', '葛\u{E0100}', 'Zoë'])
      expect({ shown, plain: isPlainText(shown) }).toEqual({ shown, plain: true });
  });

  it('escape each refused character whole, a character beyond U+FFFF as its two UTF-16 escapes', () => {
    expect(escapeInvisible('a\u00ADb\u{E0041}c\n')).toBe('a\\u00ADb\\uDB40\\uDC41c\\u000A');
  });
});
