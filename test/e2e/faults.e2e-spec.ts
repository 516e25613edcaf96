import type { InjectOptions, Response } from 'light-my-request';
import { Client } from 'pg';

import { FaultProxy } from '../support/fault-proxy';
import { expectProblem } from '../support/problems';
import { dropRedisKeys, REDIS_URL, uniqueRedisPrefix } from '../support/redis';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';
import { basicHeader, newUser, UserFixture } from '../support/users';

// The service's answers when PostgreSQL or Redis fails under it, through a TCP proxy the
// tests switch between forwarding, refusing and silence: a 503 problem with Retry-After,
// soon, never a 500 or a hang; recovery without a restart; no half-done write.

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
  const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 1000;
  const env = {
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    DATABASE_LOCK_TIMEOUT_MS: '800',
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
    DATABASE_POOL_SIZE: '4',
  };
  let db: TestDatabase;
  let proxy: FaultProxy;
  let t: TestApp;
  let region: RegionFixture;
  let user: UserFixture;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.env.DATABASE_URL);
    proxy = await FaultProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    t = await startTestApp({ ...env, DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL) }, db);
    region = await newRegion(t);
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
            WHERE datname = current_database() AND application_name = 'region-keys-api' AND wait_event_type = 'Lock'`,
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
  let proxy: FaultProxy;
  let t: TestApp;
  let prefix: string;
  let user: UserFixture;

  beforeAll(async () => {
    const redis = new URL(REDIS_URL);
    proxy = await FaultProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) });
    prefix = uniqueRedisPrefix();
    t = await startTestApp({
      REDIS_URL: proxy.rewrite(REDIS_URL),
      REDIS_KEY_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      LOGIN_FAILURE_LIMIT: '3',
      SIGNUP_RATE_LIMIT: '1000',
    });
    user = await newUser(t);
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await t?.close();
    await proxy?.close();
    await dropRedisKeys(prefix);
  });
  afterEach(async () => proxy.setMode('forward'));

  const token = (password = user.password) =>
    t.request({ method: 'POST', url: '/auth/token', payload: { email: user.email, password } });
  const signUp = () =>
    t.request({
      method: 'POST',
      url: '/user/signup',
      payload: { email: `r-${Date.now()}-${Math.random()}@example.com`, password: 'password-1' },
    });

  /** Until the service answers `status` again (Redis came back), or a deadline. */
  async function eventually(send: () => Promise<Response>, status: number): Promise<Response> {
    const deadline = Date.now() + NO_ANSWER_AFTER_MS;
    let res = await send();
    while (res.statusCode !== status && Date.now() < deadline) {
      await sleep(100);
      res = await send();
    }
    return res;
  }

  it.each(['silent', 'refuse'] as const)(
    'answers token and sign-up requests fast with 503 while Redis is %s, then recovers',
    async (mode) => {
      await proxy.setMode(mode);
      for (const send of [() => token(), signUp]) {
        const { res, ms } = await timed(send);
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBeDefined();
        expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + 3000);
      }
      await proxy.setMode('forward');
      expect((await eventually(() => token(), 201)).statusCode).toBe(201);
      expect((await eventually(signUp, 201)).statusCode).toBe(201);
    },
  );

  it('keeps cached Basic credentials working while Redis is silent, and limits guesses in this process', async () => {
    const basic = (password: string) =>
      t.request({ method: 'GET', url: '/me', headers: { authorization: basicHeader(user.email, password) } });
    expect((await basic(user.password)).statusCode).toBe(200); // verified and cached
    await proxy.setMode('silent');
    const cached = await timed(() => basic(user.password));
    expect(cached.res.statusCode).toBe(200);
    expect(cached.ms).toBeLessThan(COMMAND_TIMEOUT_MS + 3000);
    // A guess would need bcrypt, and its failure could not be counted where every
    // instance sees it: refused, and counted here. Past the limit even the cached
    // password is refused, so the cache is no oracle while Redis is away.
    for (let i = 0; i < 3; i++) expectProblem(await basic(`wrong-${i}`), 503, 'unavailable');
    expectProblem(await basic(user.password), 429, 'too-many-requests');
    await proxy.setMode('forward');
    // Back on the shared counters, which saw none of those guesses.
    expect((await eventually(() => basic(user.password), 200)).statusCode).toBe(200);
  });

  it('shuts down promptly while Redis is silent', async () => {
    const other = await startTestApp({
      REDIS_URL: proxy.rewrite(REDIS_URL),
      REDIS_KEY_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    });
    expect(
      (
        await other.request({
          method: 'POST',
          url: '/user/signup',
          payload: { email: 'shutdown@example.com', password: 'password-1' },
        })
      ).statusCode,
    ).toBe(201);
    await proxy.setMode('silent');
    await expect(within(other.close(), 'close()')).resolves.toBeUndefined();
  });
});
