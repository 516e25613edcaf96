import type { InjectOptions, Response } from 'light-my-request';
import { Client } from 'pg';

import { QUERY_TIMEOUT_MARGIN_MS } from '../../src/database/data-source';
import { FaultProxy } from '../support/fault-proxy';
import { expectProblem } from '../support/problems';
import { freePort } from '../support/processes';
import { dropRedisKeys, REDIS_URL, uniqueRedisPrefix } from '../support/redis';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';
import { basicHeader, newUser, UserFixture } from '../support/users';

// The service's answers when PostgreSQL or Redis fails under it, through a TCP proxy the
// tests switch between forwarding, refusing and silence: without PostgreSQL a 503 problem
// with Retry-After, soon, never a 500 or a hang, and no half-done write; without Redis
// every limit counted in the instance; recovery without a restart.

/** The time a test allows for an answer that must come "soon"; a hang is failed after it. */
const NO_ANSWER_AFTER_MS = 10_000;

/** What `promise` resolves to; rejects, naming `what`, if it does not settle within NO_ANSWER_AFTER_MS. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${NO_ANSWER_AFTER_MS} ms`)), NO_ANSWER_AFTER_MS);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** The response, and how long it took; rejects if none comes within NO_ANSWER_AFTER_MS. */
async function timed(send: () => Promise<Response>): Promise<{ res: Response; ms: number }> {
  const started = Date.now();
  const res = await within(send(), 'answer');
  return { res, ms: Date.now() - started };
}

function expectUnavailable(res: Response) {
  expectProblem(res, 503, 'unavailable');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(res.body).not.toMatch(/ECONN|terminat|timeout|at \w+ \(/i);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('PostgreSQL failing under the service', () => {
  // Short limits, so that silence is answered in about two seconds.
  const STATEMENT_TIMEOUT_MS = 1000;
  const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS;
  const env = {
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    DATABASE_LOCK_TIMEOUT_MS: '800',
    DATABASE_ACQUIRE_TIMEOUT_MS: '1000',
    DATABASE_POOL_SIZE: '4',
  };
  let db: TestDatabase;
  let proxy: FaultProxy;
  let t: TestApp;
  let region: RegionFixture;
  let reported: { key: string };
  let user: UserFixture;

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await FaultProxy.forUrl(db.env.DATABASE_URL);
    t = await startTestApp({ ...env, DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL) }, db);
    region = await newRegion(t);
    reported = await createKey(t, region.key);
    user = await newUser(t);
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });
  afterEach(async () => proxy.setMode('forward'));

  /** One request of each kind that reads or writes the database. */
  const dataRoutes = (): [string, InjectOptions][] => [
    ['GET /auth/regions/me', { method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } }],
    [
      'POST /auth/region/api-keys',
      { method: 'POST', url: '/auth/region/api-keys', headers: { 'x-api-key': region.key }, payload: {} },
    ],
    ...(['current', `${region.keyId}/clients`, `${region.keyId}/usage?granularity=hour`] as const).map(
      (path): [string, InjectOptions] => [
        `GET /auth/region/api-keys/${path}`,
        { method: 'GET', url: `/auth/region/api-keys/${path}`, headers: { 'x-api-key': region.key } },
      ],
    ),
    // A well-formed key of this environment is looked up (and, the first time, revoked).
    [
      'POST /auth/region/api-keys/leaked',
      { method: 'POST', url: '/auth/region/api-keys/leaked', payload: { keys: [reported.key] } },
    ],
    ['GET /planets', { method: 'GET', url: '/planets' }],
    ['GET /me (Bearer)', { method: 'GET', url: '/me', headers: { authorization: user.bearer } }],
    [
      'POST /auth/token',
      { method: 'POST', url: '/auth/token', payload: { email: user.email, password: user.password } },
    ],
    [
      'POST /user/signup',
      {
        method: 'POST',
        url: '/user/signup',
        payload: { email: `x-${Date.now()}@example.com`, password: 'password-1' },
      },
    ],
    ['GET /health', { method: 'GET', url: '/health' }],
  ];

  it('answers 503 with Retry-After within a few seconds while connections are refused, then recovers', async () => {
    await proxy.setMode('refuse');
    for (const [route, options] of dataRoutes()) {
      const { res, ms } = await timed(() => t.request(options));
      expect({ route, status: res.statusCode }).toEqual({ route, status: 503 });
      expectUnavailable(res);
      expect(ms).toBeLessThan(5000);
    }
    await proxy.setMode('forward');
    for (const [route, options] of dataRoutes()) {
      const res = await t.request(options);
      expect({ route, ok: res.statusCode < 300 }).toEqual({ route, ok: true });
    }
  });

  it('answers within the statement timeout and a margin while the database is silent, then recovers', async () => {
    await proxy.setMode('silent');
    const answers = await Promise.all(dataRoutes().map(([, options]) => timed(() => t.request(options))));
    for (const { res, ms } of answers) {
      expectUnavailable(res);
      // The client's query timeout, with room for a second one (a fresh connection's timeout
      // while the pool replaces a broken one) on a busy machine.
      expect(ms).toBeLessThan(QUERY_TIMEOUT_MS * 2 + 1500);
    }
    await proxy.setMode('forward');
    for (const [route, options] of dataRoutes()) {
      const res = await t.request(options);
      expect({ route, ok: res.statusCode < 300 }).toEqual({ route, ok: true });
    }
  });

  it('answers 503 when the server ends the session mid-query (57P01, pg_terminate_backend)', async () => {
    // A lock held by another session keeps the service's DELETE waiting inside PostgreSQL,
    // where it can be found and terminated; a patient lock timeout leaves the time to.
    const patient = await startTestApp({ ...env, DATABASE_LOCK_TIMEOUT_MS: '20000' }, db);
    const blocker = new Client({ connectionString: db.directUrl });
    // Looks from outside the blocker's transaction, in which pg_stat_activity stays one snapshot.
    const observer = new Client({ connectionString: db.directUrl });
    await blocker.connect();
    await observer.connect();
    try {
      const r = await newRegion(patient);
      const second = await createKey(patient, r.key);
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM regions WHERE id = $1 FOR UPDATE', [r.regionId]);
      const pending = timed(() =>
        patient.request({
          method: 'DELETE',
          url: `/auth/region/api-keys/${second.id}`,
          headers: { 'x-api-key': r.key },
        }),
      );
      let terminated = 0;
      for (let tries = 0; terminated === 0 && tries < 200; tries++) {
        await sleep(25);
        const { rows } = await observer.query(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
            WHERE datname = current_database() AND application_name LIKE 'region-keys-api/%' AND wait_event_type = 'Lock'`,
        );
        terminated = rows.length;
      }
      expect(terminated).toBe(1);
      expectUnavailable((await pending).res);
      await blocker.query('ROLLBACK');
      // The pool let the dead connection go: the same request now succeeds.
      const retry = await patient.request({
        method: 'DELETE',
        url: `/auth/region/api-keys/${second.id}`,
        headers: { 'x-api-key': r.key },
      });
      expect(retry.statusCode).toBe(204);
    } finally {
      await blocker.end();
      await observer.end();
      await patient.close();
    }
  });

  it('leaves no half-done write when connections are reset in the middle of key changes', async () => {
    const r = await newRegion(t);
    const keys = [{ id: r.keyId, key: r.key }];
    for (let i = 0; i < 5; i++) keys.push(await createKey(t, r.key));
    // Creates and deletes of one region's keys, all at once; the connections are reset
    // while they run, so some finish, some fail, and some may have committed unseen.
    const changes = [
      ...keys.map(({ id }, i) =>
        t.request({
          method: 'DELETE',
          url: `/auth/region/api-keys/${id}`,
          headers: { 'x-api-key': keys[(i + 1) % keys.length].key },
        }),
      ),
      ...keys.map(({ key }, i) =>
        t.request({
          method: 'POST',
          url: '/auth/region/api-keys',
          headers: { 'x-api-key': key },
          payload: { description: `during fault ${i}` },
        }),
      ),
    ];
    await sleep(5);
    await proxy.setMode('refuse');
    const results = await Promise.all(changes);
    await proxy.setMode('forward');
    for (const res of results) expect([201, 204, 401, 404, 409, 503]).toContain(res.statusCode);

    // Read straight from the database: the region has an active key, every key row is whole,
    // every key whose creation was answered 201 exists, and every 204 delete took effect.
    const direct = new Client({ connectionString: db.directUrl });
    await direct.connect();
    try {
      const { rows } = await direct.query(
        'SELECT id, token_hash, token_preview, revoked_at FROM api_keys WHERE region_id = $1',
        [r.regionId],
      );
      expect(rows.filter((row) => row.revoked_at === null).length).toBeGreaterThanOrEqual(1);
      for (const row of rows)
        expect(row).toMatchObject({
          token_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
          token_preview: expect.stringMatching(/^rk_/),
        });
      const byId = new Map(rows.map((row) => [row.id, row]));
      results.slice(0, keys.length).forEach((res, i) => {
        if (res.statusCode === 204) expect(byId.get(keys[i].id)?.revoked_at).toBeInstanceOf(Date);
      });
      for (const res of results.slice(keys.length)) {
        if (res.statusCode === 201) expect(byId.get(res.json().id)).toMatchObject({ revoked_at: null });
      }
    } finally {
      await direct.end();
    }
    // And the service sees the same, through the key that survived.
    const survivor = keys.find((_, i) => results[i].statusCode !== 204)!;
    const res = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': survivor.key } });
    if (res.statusCode === 200) expect(res.json().apiKeys.length).toBeGreaterThanOrEqual(1);
  });
});

describe('Redis failing under the rate limits', () => {
  const COMMAND_TIMEOUT_MS = 300;
  const LIMIT = 3;
  let proxy: FaultProxy;
  let t: TestApp;
  let other: TestApp;
  let metricsPort: number;
  let prefix: string;
  let user: UserFixture;

  const proxied = () => ({
    REDIS_URL: proxy.rewrite(REDIS_URL),
    REDIS_KEY_PREFIX: prefix,
    REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    LOGIN_FAILURE_LIMIT: String(LIMIT),
    SIGNUP_RATE_LIMIT: '1000',
  });

  beforeAll(async () => {
    proxy = await FaultProxy.forUrl(REDIS_URL);
    prefix = uniqueRedisPrefix();
    metricsPort = await freePort();
    // Another instance on the same Redis, reached directly: it sees what t counts there.
    // Started first: Nest's logger is the last app's, and t's lines are the ones checked.
    other = await startTestApp({ ...proxied(), REDIS_URL });
    t = await startTestApp({ ...proxied(), METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' });
    user = await newUser(t);
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await other?.close();
    await t?.close();
    await proxy?.close();
    await dropRedisKeys(prefix);
  });
  afterEach(async () => proxy.setMode('forward'));

  const token = (app: TestApp, email = user.email, password = user.password) =>
    app.request({ method: 'POST', url: '/auth/token', payload: { email, password } });
  const signUp = (app = t) =>
    app.request({
      method: 'POST',
      url: '/user/signup',
      payload: { email: `r-${Date.now()}-${Math.random()}@example.com`, password: 'password-1' },
    });
  const readiness = async (app = t) => {
    const res = await app.request({ method: 'GET', url: '/health/ready' });
    return { status: res.statusCode, redis: res.json<{ redis?: string }>().redis };
  };
  const degradedGauge = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return Number(/^region_keys_api_redis_degraded (\S+)$/m.exec(text)?.[1]);
  };
  const fallbackWarnings = (app: TestApp) =>
    app.logs.filter((line) => line.includes('each instance counts the rate limits on its own')).length;

  /** Until `check` holds (Redis came back and the client reconnected), or a deadline. */
  async function eventually(check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + NO_ANSWER_AFTER_MS;
    while (!(await check()) && Date.now() < deadline) await sleep(100);
    expect(await check()).toBe(true);
  }

  /** LIMIT failed sign-ins for `email` through `first`, the last of them through `last`; the next is refused. */
  async function expectSharedLimit(first: TestApp, last: TestApp): Promise<void> {
    const email = `shared-${Math.random()}@example.com`;
    for (let i = 0; i < LIMIT - 1; i++) expect((await token(first, email, 'wrong')).statusCode).toBe(401);
    expect((await token(last, email, 'wrong')).statusCode).toBe(401);
    expectProblem(await token(last, email, 'wrong'), 429, 'too-many-requests');
  }

  it.each(['silent', 'refuse'] as const)(
    'stays ready and keeps signing in and up while Redis is %s, counting in this instance, then shares the counts again',
    async (mode) => {
      const warnings = fallbackWarnings(t);
      await proxy.setMode(mode);
      for (const send of [() => token(t), () => signUp()]) {
        const { res, ms } = await timed(send);
        expect(res.statusCode).toBe(201);
        expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + 3000);
      }
      expect(await readiness()).toEqual({ status: 200, redis: 'degraded' });
      expect((await t.request({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      expect(await degradedGauge()).toBe(1);
      // The failed-sign-in limit holds, counted here: the other instance saw none of it.
      const email = `local-${mode}@example.com`;
      for (let i = 0; i < LIMIT; i++) expect((await token(t, email, 'wrong')).statusCode).toBe(401);
      expectProblem(await token(t, email, 'wrong'), 429, 'too-many-requests');
      expect((await token(other, email, 'wrong')).statusCode).toBe(401);
      expect(fallbackWarnings(t)).toBe(warnings + 1);

      await proxy.setMode('forward');
      await eventually(async () => (await degradedGauge()) === 0);
      expect(await readiness()).toEqual({ status: 200, redis: 'up' });
      expect(t.logs.filter((line) => line.includes('Redis answers again')).length).toBeGreaterThanOrEqual(1);
      await expectSharedLimit(t, other);
      expect(fallbackWarnings(t)).toBe(warnings + 1);
    },
  );

  it('starts while Redis is away, ready, and shares the counts once Redis comes', async () => {
    await proxy.setMode('refuse');
    const late = await startTestApp(proxied());
    try {
      expect(await readiness(late)).toEqual({ status: 200, redis: 'degraded' });
      expect((await signUp(late)).statusCode).toBe(201);
      await proxy.setMode('forward');
      await eventually(async () => (await readiness(late)).redis === 'up');
      await expectSharedLimit(late, other);
    } finally {
      await late.close();
    }
  });

  it('keeps Basic credentials working while Redis is silent, and limits guesses in this instance', async () => {
    const basicUser = await newUser(t);
    const basic = (password: string) =>
      t.request({ method: 'GET', url: '/me', headers: { authorization: basicHeader(basicUser.email, password) } });
    expect((await basic(basicUser.password)).statusCode).toBe(200); // verified and cached
    await proxy.setMode('silent');
    const cached = await timed(() => basic(basicUser.password));
    expect(cached.res.statusCode).toBe(200);
    expect(cached.ms).toBeLessThan(COMMAND_TIMEOUT_MS + 3000);
    // Guesses are checked and counted here; past the limit even the cached password is
    // refused, so the cache is no oracle while Redis is away.
    for (let i = 0; i < LIMIT; i++) expect((await basic(`wrong-${i}`)).statusCode).toBe(401);
    expectProblem(await basic(basicUser.password), 429, 'too-many-requests');
    await proxy.setMode('forward');
    // Back on the shared counters, which saw none of those guesses.
    await eventually(async () => (await basic(basicUser.password)).statusCode === 200);
  });

  it('shuts down promptly while Redis is silent', async () => {
    const closing = await startTestApp(proxied());
    expect((await signUp(closing)).statusCode).toBe(201);
    await proxy.setMode('silent');
    await expect(within(closing.close(), 'close()')).resolves.toBeUndefined();
  });
});
