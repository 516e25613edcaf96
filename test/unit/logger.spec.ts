import { Writable } from 'node:stream';

import { QueryFailedError } from 'typeorm';

import {
  createRootLogger,
  errorWithoutValues,
  OneLinePerRequest,
  PinoNestLogger,
} from '../../src/common/logging/logger';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

describe('createRootLogger', () => {
  it('writes JSON lines by default, and in development when not on a terminal', () => {
    for (const development of [false, true]) {
      const { lines, destination } = capture();
      createRootLogger({ level: 'info', format: 'auto', development, destination }).info(
        { requestId: 'r1' },
        'request completed',
      );
      expect(JSON.parse(lines[0])).toMatchObject({ level: 30, requestId: 'r1', msg: 'request completed' });
    }
  });

  it('writes human-readable lines when asked for pretty', () => {
    const { lines, destination } = capture();
    createRootLogger({ level: 'info', format: 'pretty', destination }).info({ requestId: 'r1' }, 'request completed');
    const text = lines.join('\n');
    expect(() => JSON.parse(lines[0])).toThrow();
    expect(text).toMatch(/INFO.*request completed/);
    expect(text).toMatch(/requestId: "r1"/);
  });
});

describe('PinoNestLogger', () => {
  it("keeps Nest's report of the error that failed a start, with its stack, for LOG_LEVEL=debug: the caller says it in one line", () => {
    for (const level of ['info', 'debug'] as const) {
      const { lines, destination } = capture();
      const nest = new PinoNestLogger(createRootLogger({ level, format: 'json', destination }));
      nest.error(new Error('database "x" does not exist'), undefined, 'ExceptionHandler');
      nest.error('a provider failed', 'Error: stack', 'InstanceLoader');
      const parsed = lines.map(
        (line) => JSON.parse(line) as { level: number; context: string; err?: { stack: string } },
      );
      expect(parsed.map(({ level: l, context }) => ({ level: l, context }))).toEqual([
        ...(level === 'debug' ? [{ level: 20, context: 'ExceptionHandler' }] : []),
        { level: 50, context: 'InstanceLoader' },
      ]);
      if (level === 'debug') expect(parsed[0].err?.stack).toMatch(/does not exist/);
    }
  });
});

describe('errorWithoutValues', () => {
  it('logs a failed query with its SQL and code, but none of its parameter values or the row PostgreSQL quotes', () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      code: '23505',
      detail: 'Key (email)=(someone@example.com) already exists.',
      parameters: ['someone@example.com', '$2b$12$hash'],
    });
    const err = new QueryFailedError(
      'INSERT INTO users (email, password_hash) VALUES ($1, $2)',
      ['someone@example.com', '$2b$12$hash'],
      driverError,
    );
    const logged = JSON.stringify(errorWithoutValues(err));
    expect(logged).toContain('INSERT INTO users');
    expect(logged).toContain('23505');
    expect(logged).not.toContain('someone@example.com');
    expect(logged).not.toContain('$2b$12$hash');
  });

  it('keeps what an ordinary error says', () => {
    expect(errorWithoutValues(new TypeError('x is not a function'))).toMatchObject({
      type: 'TypeError',
      message: 'x is not a function',
      stack: expect.any(String),
    });
  });
});

describe('OneLinePerRequest', () => {
  const instant = Date.UTC(2026, 10, 26, 13, 16, 43, 7);
  beforeAll(() => jest.useFakeTimers({ now: instant }));
  afterAll(() => jest.useRealTimers());

  type Line = [request: Record<string, unknown>, reply: { statusCode: number; elapsedTime: number }];

  /** The line OneLinePerRequest writes, and the one pino writes for the same request through its serializers. */
  function bothLines(level: 'debug' | 'info' | 'warn', [request, reply]: Line) {
    const ours = capture();
    new OneLinePerRequest(createRootLogger({ level, destination: ours.destination })).requestCompleted(
      null,
      request as never,
      reply as never,
    );
    const pinos = capture();
    const lines = createRootLogger({ level, destination: pinos.destination }).child({}, { redact: { paths: [] } });
    const status = reply.statusCode;
    const health = String(request.url).startsWith('/health') && request.routeOptions !== undefined;
    const method = health ? (status < 500 ? 'debug' : 'warn') : status >= 500 ? 'error' : 'info';
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    lines[method]({ requestId: request.id, req: request, res: reply, responseTime }, 'request completed');
    return { ours: ours.lines, pinos: pinos.lines };
  }

  const request = (url: string, extra: Record<string, unknown> = {}) => ({
    id: '370ebc03-905c-4279-bce2-14cad6b1fb83',
    method: 'GET',
    url,
    ip: '127.0.0.1',
    routeOptions: { url: undefined },
    ...extra,
  });

  it.each<[string, Line]>([
    ['a 404 on an unknown path', [request('/no/such/route'), { statusCode: 404, elapsedTime: 0.4123 }]],
    ['a query string, left out', [request('/planets?limit=5&api_key=x'), { statusCode: 200, elapsedTime: 12.06 }]],
    [
      'a key-shaped path, scrubbed',
      [request('/auth/regions/rk_live_abc123DEF456ghi789'), { statusCode: 404, elapsedTime: 1 }],
    ],
    [
      'quotes, backslashes and control characters',
      [request('/a"b\\c\u0001d\u2028é'), { statusCode: 404, elapsedTime: 3 }],
    ],
    ['an id that needs escaping', [request('/x', { id: 'a"\\b' }), { statusCode: 400, elapsedTime: 0 }]],
    ['no address (a socket already gone)', [request('/x', { ip: undefined }), { statusCode: 499, elapsedTime: 2 }]],
    ['an IPv6 address', [request('/x', { ip: '::ffff:10.0.0.1' }), { statusCode: 201, elapsedTime: 5.55 }]],
    ['a 500', [request('/me', { method: 'POST' }), { statusCode: 503, elapsedTime: 30001.25 }]],
    ['a response time that is not a number', [request('/x'), { statusCode: 200, elapsedTime: Number.NaN }]],
    [
      'a health probe',
      [request('/health/ready', { routeOptions: { url: '/health/ready' } }), { statusCode: 200, elapsedTime: 1 }],
    ],
    [
      'a failing health probe',
      [request('/health/ready', { routeOptions: { url: '/health/ready' } }), { statusCode: 503, elapsedTime: 1 }],
    ],
  ])('writes the same line as pino would for %s', (_what, line) => {
    for (const level of ['debug', 'info', 'warn'] as const) {
      const { ours, pinos } = bothLines(level, line);
      expect(ours).toEqual(pinos);
    }
    expect(bothLines('debug', line).ours).toHaveLength(1);
  });

  it('writes nothing below the logger level', () => {
    const { ours } = bothLines('warn', [request('/no/such/route'), { statusCode: 404, elapsedTime: 1 }]);
    expect(ours).toEqual([]);
  });
});
