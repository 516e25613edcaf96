import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { jest } from '@jest/globals';

import { ShutdownState } from '../../src/common/lifecycle/shutdown-state';
import { FaultProxy } from '../support/fault-proxy';
import { expectProblem } from '../support/problems';
import { freePort, startProcess } from '../support/processes';
import { REDIS_URL, uniqueRedisPrefix } from '../support/redis';
import { newRegion, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * What an operator relies on: liveness and readiness probes (readiness follows the database
 * and a shutdown, and reports Redis), probe lines kept out of the info log, 5xx lines at error.
 */
jest.setTimeout(120_000);

/** One GET on the agent's connections: its status, its Connection header, and whether it reused one. */
function viaAgent(agent: Agent, port: number) {
  return new Promise<{ status?: number; connection?: string; reused: boolean }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/health/live', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode, connection: res.headers.connection, reused: req.reusedSocket }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The readiness status once it is 200, or the last one seen after 10 s of asking. */
async function readinessWithin10s(t: TestApp): Promise<number> {
  let status = 0;
  for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
    status = (await t.request({ method: 'GET', url: '/health/ready' })).statusCode;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return status;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const logLines = (t: TestApp) =>
  t.logs.map((line) => JSON.parse(line) as { level: number; req?: { path: string }; res?: { statusCode: number } });

describe('probes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  it('answers liveness without touching the database, and readiness with what it checked', async () => {
    const live = await t.request({ method: 'GET', url: '/health/live' });
    expect([live.statusCode, live.json()]).toEqual([200, { status: 'ok' }]);
    for (const url of ['/health/ready', '/health']) {
      const ready = await t.request({ method: 'GET', url });
      expect([ready.statusCode, ready.json()]).toEqual([
        200,
        { status: 'ok', database: 'up', redis: 'not configured' },
      ]);
    }
  });

  it('keeps probes out of the info log, and logs other requests there', async () => {
    await t.request({ method: 'GET', url: '/health/live' });
    await t.request({ method: 'GET', url: '/health/ready' });
    await t.request({ method: 'GET', url: '/planets' });
    const paths = logLines(t).map((line) => line.req?.path);
    expect(paths).toContain('/planets');
    expect(paths.filter((path) => path?.startsWith('/health'))).toEqual([]);
  });

  // Last in this block: the app stays "shutting down".
  it('turns readiness 503 as soon as a shutdown begins, while liveness stays 200, and closes connections', async () => {
    expect((await t.request({ method: 'GET', url: '/health/live' })).headers.connection).not.toBe('close');
    t.app.get(ShutdownState).begin();
    // Every response from then on closes its connection, so a balancer never reuses one.
    expect((await t.request({ method: 'GET', url: '/planets' })).headers.connection).toBe('close');
    const ready = await t.request({ method: 'GET', url: '/health/ready' });
    expect(expectProblem(ready, 503, 'unavailable').detail).toBe('Not ready: the server is shutting down.');
    expect(ready.headers['retry-after']).toBe('5');
    expectProblem(await t.request({ method: 'GET', url: '/health' }), 503);
    expect((await t.request({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    // A failing probe is worth a warning line.
    expect(
      logLines(t)
        .filter((line) => line.req?.path === '/health/ready')
        .map((line) => line.level),
    ).toEqual([40]);
  });
});

describe('readiness and Redis', () => {
  let proxy: FaultProxy;
  let t: TestApp;
  beforeAll(async () => {
    proxy = await FaultProxy.forUrl(REDIS_URL);
    t = await startTestApp({
      REDIS_URL: proxy.rewrite(REDIS_URL),
      REDIS_KEY_PREFIX: uniqueRedisPrefix(),
      REDIS_COMMAND_TIMEOUT_MS: '500',
    });
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await t?.close();
    await proxy?.close();
  });

  it('stays ready whether Redis answers or not, and says how the rate limits are counted', async () => {
    const readiness = async () => {
      const res = await t.request({ method: 'GET', url: '/health/ready' });
      return [res.statusCode, res.json()] as const;
    };
    expect(await readiness()).toEqual([200, { status: 'ok', database: 'up', redis: 'up' }]);
    for (const mode of ['refuse', 'silent'] as const) {
      await proxy.setMode(mode);
      // A request finds Redis away (at once, or within the command timeout).
      await t.request({ method: 'POST', url: '/auth/token', payload: { email: 'a@example.com', password: 'x' } });
      expect(await readiness()).toEqual([200, { status: 'ok', database: 'up', redis: 'degraded' }]);
      await proxy.setMode('forward');
      const deadline = Date.now() + 10_000;
      while ((await readiness())[1].redis !== 'up' && Date.now() < deadline) await sleep(100);
      expect(await readiness()).toEqual([200, { status: 'ok', database: 'up', redis: 'up' }]);
    }
  });
});

(usesPostgresServer() ? describe : describe.skip)('readiness and error lines with PostgreSQL down', () => {
  let proxy: FaultProxy;
  let t: TestApp;
  let key: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    proxy = await FaultProxy.forUrl(db.env.DATABASE_URL);
    t = await startTestApp(
      { DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL), DATABASE_ACQUIRE_TIMEOUT_MS: '1000' },
      db,
    );
    key = (await newRegion(t)).key;
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await t?.close();
    await proxy?.close();
    await drop?.();
  });

  it('answers 503 naming the database, logs the failed request at error, and is ready again when it is back', async () => {
    await proxy.setMode('refuse');
    expect(expectProblem(await t.request({ method: 'GET', url: '/health/ready' }), 503).detail).toBe(
      'Not ready: the database does not answer.',
    );
    const failed = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
    expectProblem(failed, 503);
    const line = logLines(t).find((entry) => entry.req?.path === '/auth/regions/me' && entry.res?.statusCode === 503);
    expect(line?.level).toBe(50);
    await proxy.setMode('forward');
    expect(await readinessWithin10s(t)).toBe(200);
  });
});

describe('the real server', () => {
  let dir: string;
  let db: TestDatabase;
  let port: number;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rk-ops-'));
    db = await createTestDatabase();
    port = await freePort();
  });
  afterEach(async () => {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  /** Its own database on the PostgreSQL server, or an embedded one in the test's folder. */
  const database = (): Record<string, string> =>
    db.env.DATABASE_URL ? { DATABASE_URL: db.env.DATABASE_URL } : { DATA_DIR: join(dir, 'data') };

  it('answers readiness 503 from SIGTERM on, during SHUTDOWN_DELAY_MS, while serving, then exits 0', async () => {
    const server = startProcess('dist/src/main.js', [], {
      ...database(),
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      INITIAL_REGION_API_KEY: 'operator-chosen-initial-key-0123456789abcdef',
      SHUTDOWN_DELAY_MS: '3000',
      SHUTDOWN_GRACE_MS: '60000',
    });
    try {
      await server.waitFor(/Server listening/);
      const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);
      expect((await get('/health/ready')).status).toBe(200);
      // A balancer's kept-alive connection, idle when the signal comes.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      expect(await viaAgent(agent, port)).toEqual({ status: 200, connection: 'keep-alive', reused: false });
      server.child.kill('SIGTERM');
      await server.waitFor(/SIGTERM received/);
      // Still open during the delay, and the answer on it closes it: the balancer never
      // sends on a connection the server is closing.
      expect(await viaAgent(agent, port)).toEqual({ status: 200, connection: 'close', reused: true });
      expect(await viaAgent(agent, port)).toEqual({ status: 200, connection: 'close', reused: false });
      agent.destroy();
      const ready = await get('/health/ready');
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toBe('Not ready: the server is shutting down.');
      expect((await get('/health/live')).status).toBe(200);
      expect((await get('/planets')).status).toBe(200);
      expect(await server.exited).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('reads a .env file in its working directory, and the environment wins over it', async () => {
    const key = 'operator-chosen-initial-key-from-dotenv-0123456789';
    const settings = {
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      ...database(),
      INITIAL_REGION_API_KEY: key,
      INITIAL_REGION_NAME: '"From the file"',
    };
    writeFileSync(
      join(dir, '.env'),
      Object.entries(settings)
        .map(([name, value]) => `${name}=${value}`)
        .join('\n'),
    );
    const server = startProcess(
      join(process.cwd(), 'dist/src/main.js'),
      [],
      { INITIAL_REGION_NAME: 'From the environment' },
      { cwd: dir },
    );
    try {
      await server.waitFor(/Serving on/);
      const me = await fetch(`http://127.0.0.1:${port}/auth/regions/me`, { headers: { 'x-api-key': key } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { name: string }).name).toBe('From the environment');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
