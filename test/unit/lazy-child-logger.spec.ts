import { Writable } from 'node:stream';

import { LazyChildLogger } from '../../src/common/logging/lazy-child-logger';
import { createRootLogger } from '../../src/common/logging/logger';

function rootWritingTo(lines: Record<string, unknown>[], level: 'info' | 'warn' = 'info') {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createRootLogger({ level, destination });
}

describe("a request's logger made when used", () => {
  it('makes no child of the root until something logs through it', () => {
    const root = rootWritingTo([]);
    const child = jest.spyOn(root, 'child');
    const log = LazyChildLogger.factory(root, { requestId: 'r1' }, {});
    expect(log.level).toBe('info');
    expect(child).not.toHaveBeenCalled();
    log.warn('first');
    log.warn('second');
    expect(child).toHaveBeenCalledTimes(1);
    expect(child).toHaveBeenCalledWith({ requestId: 'r1' }, {});
  });

  it("writes the child's lines: the request id bound, secrets redacted, every form of call", () => {
    const lines: Record<string, unknown>[] = [];
    const log = LazyChildLogger.factory(rootWritingTo(lines), { requestId: 'r1' }, {});
    log.info({ headers: { authorization: 'Bearer secret', accept: '*/*' } }, 'with an object');
    log.error('formatted %s', 'text');
    log.warn(new Error('boom'));
    log.debug('below the level');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      requestId: 'r1',
      level: 30,
      msg: 'with an object',
      headers: { authorization: '[redacted]', accept: '*/*' },
    });
    expect(lines[1]).toMatchObject({ requestId: 'r1', level: 50, msg: 'formatted text' });
    expect(lines[2]).toMatchObject({ requestId: 'r1', level: 40, msg: 'boom', err: { message: 'boom' } });
  });

  it("keeps a route's own log level, and makes further children", () => {
    const lines: Record<string, unknown>[] = [];
    const log = LazyChildLogger.factory(rootWritingTo(lines, 'warn'), { requestId: 'r2' }, { level: 'debug' });
    expect(log.level).toBe('debug');
    log.debug('a debug line');
    log.child({ part: 'upload' }).info('from a child');
    expect(lines).toEqual([
      expect.objectContaining({ requestId: 'r2', level: 20, msg: 'a debug line' }),
      expect.objectContaining({ requestId: 'r2', part: 'upload', level: 30, msg: 'from a child' }),
    ]);
  });
});
