import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { jest } from '@jest/globals';

import { freePort, startProcess } from '../support/processes';
import { dropRedisKeys, REDIS_URL, uniqueRedisPrefix } from '../support/redis';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * OpenTelemetry in the built server, as a real process: spans sent over OTLP/HTTP (JSON) to
 * a receiver in this test. pg spans show on the embedded database too: the server talks to
 * PGlite through the ordinary `pg` driver over a socket. With DATABASE_URL set, the same
 * tests run on the PostgreSQL server.
 */
jest.setTimeout(120_000);

const SERVER = 'dist/src/main.js';
const KEY = 'operator-chosen-initial-key-0123456789abcdef';
const SPAN_KIND_SERVER = 2;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

/** An OTLP/HTTP receiver: keeps every span it is sent, with its resource's attributes. */
async function startReceiver(): Promise<{ url: string; spans: OtlpSpan[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += String(chunk)));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const resource = Object.fromEntries(
            (rs.resource?.attributes ?? []).map((a: OtlpSpan['attributes'][0]) => [a.key, Object.values(a.value)[0]]),
          );
          for (const ss of rs.scopeSpans ?? [])
            for (const span of ss.spans ?? []) spans.push({ attributes: [], ...span, resource });
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, server };
}

/** Whether `span` is `ancestor` or descends from it, following parent ids within its trace. */
function descendsFrom(span: OtlpSpan, ancestor: OtlpSpan, all: OtlpSpan[]): boolean {
  const byId = new Map(all.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]));
  for (
    let current: OtlpSpan | undefined = span;
    current;
    current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined
  ) {
    if (current.spanId === ancestor.spanId && current.traceId === ancestor.traceId) return true;
  }
  return false;
}

// A preload that, at exit, writes which OpenTelemetry modules the process had loaded.
let workDir: string;
let preload: string;
const loadedModulesAtExit = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as string[];

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'rk-tracing-'));
  preload = join(workDir, 'report-loaded.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED_MODULES_FILE,
       JSON.stringify(Object.keys(require.cache).filter((f) => /[\\\\/]node_modules[\\\\/](@opentelemetry|@fastify[\\\\/]otel)[\\\\/]/.test(f)))));`,
  );
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let db: TestDatabase;
  let redisPrefix: string;
  // One server for the tests below: the requests are made here, the spans read after it stops.
  let spans: OtlpSpan[];
  let loadedFile: string;
  const requestIds: Record<'me' | 'signUp' | 'planets' | 'keyed', string> = {
    me: '',
    signUp: '',
    planets: '',
    keyed: '',
  };
  // A key a client put in the path (percent-encoded) and in the query string.
  const keyBody = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijk';
  beforeAll(async () => {
    db = await createTestDatabase();
    redisPrefix = uniqueRedisPrefix();
    const receiver = await startReceiver();
    const port = await freePort();
    loadedFile = join(workDir, 'loaded-on.json');
    const server = startProcess(SERVER, [], {
      ...db.env,
      PORT: String(port),
      NODE_ENV: 'test',
      INITIAL_REGION_API_KEY: KEY,
      REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      // Nothing is sent before the shutdown: the spans reach the receiver only if SIGTERM flushes them.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      NODE_OPTIONS: `--require ${preload}`,
      LOADED_MODULES_FILE: loadedFile,
    });
    const call = async (path: string, init?: RequestInit) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, init);
      return { status: response.status, requestId: response.headers.get('x-request-id')! };
    };
    try {
      await server.waitFor(/Server listening/);
      const me = await call('/auth/regions/me', { headers: { 'x-api-key': KEY, 'x-request-id': 'trace-test-me' } });
      expect(me).toEqual({ status: 200, requestId: 'trace-test-me' });
      const signUp = await call('/user/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'traced@example.com', password: 'password-1' }),
      });
      expect(signUp.status).toBe(201);
      expect(signUp.requestId).toMatch(/^[0-9a-f-]{36}$/);
      const planets = await call('/planets?limit=2');
      expect(planets.status).toBe(200);
      const keyed = await call(`/planets/rk%5F${keyBody}?api_key=rk_${keyBody}`);
      expect(keyed.status).toBe(400);
      Object.assign(requestIds, {
        me: me.requestId,
        signUp: signUp.requestId,
        planets: planets.requestId,
        keyed: keyed.requestId,
      });
      // The readiness probes ask PostgreSQL: 200 says it was called.
      for (const probe of ['/health/live', '/health/ready', '/health', '/health/ready?verbose=1'])
        expect((await call(probe)).status).toBe(200);
      expect(receiver.spans).toEqual([]);

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      spans = receiver.spans;
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      receiver.server.close();
    }
  });
  afterAll(async () => {
    await db?.drop();
    await dropRedisKeys(redisPrefix);
  });

  const serverSpanOf = (requestId: string) => {
    const found = spans.filter((s) => s.kind === SPAN_KIND_SERVER && attribute(s, 'http.request.id') === requestId);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const dbSystem = (span: OtlpSpan) => String(attribute(span, 'db.system.name') ?? attribute(span, 'db.system'));
  const statement = (span: OtlpSpan) => String(attribute(span, 'db.query.text') ?? attribute(span, 'db.statement'));

  it('exports a server span per request with its request id, and the database and Redis calls made for it under it', () => {
    const meSpan = serverSpanOf(requestIds.me);
    expect(meSpan.resource['service.name']).toBe('region-keys-api');
    expect(attribute(meSpan, 'http.route')).toBe('/auth/regions/me');
    const meQueries = spans.filter((s) => dbSystem(s) === 'postgresql');
    expect(meQueries.filter((s) => descendsFrom(s, meSpan, spans)).length).toBeGreaterThanOrEqual(1);

    const signUpSpan = serverSpanOf(requestIds.signUp);
    const under = spans.filter((s) => s !== signUpSpan && descendsFrom(s, signUpSpan, spans));
    expect(under.some((s) => /postgresql/.test(dbSystem(s)))).toBe(true);
    expect(under.some((s) => /redis/.test(dbSystem(s)))).toBe(true);
    // Parameter values stay out of spans: the email was one.
    expect(JSON.stringify(spans)).not.toContain('traced@example.com');
    expect(spans.flatMap((s) => s.attributes.map((a) => a.key)).filter((key) => /values|parameter/.test(key))).toEqual(
      [],
    );

    // What the test without the endpoint checks is absent is here with it.
    const loaded = loadedModulesAtExit(loadedFile);
    for (const name of ['@opentelemetry/sdk-node', '@opentelemetry/instrumentation-pg', '@fastify/otel'])
      expect(loaded.some((f) => f.includes(`/node_modules/${name}/`))).toBe(true);
  });

  it('keeps the query string out of url.path, in url.query', () => {
    const planetsSpan = serverSpanOf(requestIds.planets);
    expect(attribute(planetsSpan, 'url.path')).toBe('/planets');
    expect(attribute(planetsSpan, 'url.query')).toBe('limit=2');
    const paths = spans.map((s) => attribute(s, 'url.path')).filter((path) => path !== undefined);
    expect(paths).toContain('/planets');
    expect(paths.filter((path) => String(path).includes('?'))).toEqual([]);
  });

  it('records a key-shaped part of a path or query, in any spelling, blanked', () => {
    const keyedSpan = serverSpanOf(requestIds.keyed);
    expect(attribute(keyedSpan, 'url.path')).toBe('/planets/rk_[redacted]');
    expect(attribute(keyedSpan, 'url.query')).toBe('api_key=rk_[redacted]');
    expect(JSON.stringify(spans)).not.toContain(keyBody);
  });

  it('traces no health probe, nor the database and Redis calls of one', () => {
    const traced = new Set(Object.values(requestIds).map((id) => serverSpanOf(id).traceId));
    expect(spans.filter((s) => !traced.has(s.traceId)).map((s) => s.name)).toEqual([]);
  });

  it('records Redis commands by name, a script by its SHA-1, and neither keys nor script bodies', () => {
    const redisSpans = spans.filter((s) => /redis/.test(dbSystem(s)));
    expect(redisSpans.map(statement)).toContainEqual(expect.stringMatching(/^eval(sha)? [0-9a-f]{40}$/));
    expect(redisSpans.map(statement).filter((text) => !/^[a-z_]+( [0-9a-f]{40})?$/.test(text))).toEqual([]);
    expect(JSON.stringify(spans)).not.toContain('redis.call');
    expect(JSON.stringify(spans)).not.toContain(redisPrefix);
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('loads nothing of OpenTelemetry', async () => {
    const dataDir = mkdtempSync(join(workDir, 'data-'));
    const loadedFile = join(workDir, 'loaded-off.json');
    const server = startProcess(SERVER, [], {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      NODE_ENV: 'test',
      INITIAL_REGION_API_KEY: KEY,
      NODE_OPTIONS: `--require ${preload}`,
      LOADED_MODULES_FILE: loadedFile,
    });
    try {
      await server.waitFor(/Server listening/);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    // prom-client loads the API package (a no-op without an SDK, patching nothing) for its
    // exemplars; no SDK, exporter or instrumentation may be there.
    const loaded = loadedModulesAtExit(loadedFile);
    expect(loaded.filter((f) => !/[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/.test(f))).toEqual([]);
  });
});
