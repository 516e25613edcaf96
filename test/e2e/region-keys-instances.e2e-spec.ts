import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createKey, newRegion, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * Two server instances on one PostgreSQL server, as in a deployment with several replicas.
 * The embedded database serves one process only, so this suite runs in the PostgreSQL
 * pass of the test run (DATABASE_URL set); .ci/run always runs that pass.
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('two instances on one PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startTestApp({}, db);
    b = await startTestApp({}, db);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  const regionOf = (t: TestApp, key: string) => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });

  it('keeps exactly one key when all keys are deleted at once through both instances', async () => {
    const n = 30;
    const r = await newRegion(a);
    const keys = [{ id: r.keyId, key: r.key }];
    for (let i = 1; i < n; i++) keys.push(await createKey(i % 2 ? a : b, r.key));
    const results = await Promise.all(
      keys.map(({ id, key }, i) =>
        (i % 2 ? a : b).request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } }),
      ),
    );
    const statuses = results.map((res) => res.statusCode);
    expect(statuses.filter((s) => s === 204)).toHaveLength(n - 1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
    const survivor = keys[statuses.indexOf(409)];
    for (const t of [a, b]) {
      const res = await regionOf(t, survivor.key);
      expect(res.statusCode).toBe(200);
      expect(res.json().apiKeys.map((k: { id: string }) => k.id)).toEqual([survivor.id]);
    }
  });

  it('stops a key revoked through one instance from authenticating on the other at once', async () => {
    const r = await newRegion(a);
    const second = await createKey(a, r.key);
    expect((await regionOf(b, second.key)).statusCode).toBe(200);
    const res = await a.request({ method: 'DELETE', url: `/auth/region/api-keys/${second.id}`, headers: { 'x-api-key': r.key } });
    expect(res.statusCode).toBe(204);
    expect((await regionOf(b, second.key)).statusCode).toBe(401);
  });

  it('answers 503 with Retry-After instead of hanging when the region row stays locked', async () => {
    const impatient = await startTestApp({ DATABASE_LOCK_TIMEOUT_MS: '300' }, db);
    const r = await newRegion(impatient);
    const second = await createKey(impatient, r.key);
    const blocker = new Client({ connectionString: db.env.DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM regions WHERE id = $1 FOR UPDATE', [r.regionId]);
      const res = await impatient.request({ method: 'DELETE', url: `/auth/region/api-keys/${second.id}`, headers: { 'x-api-key': r.key } });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toMatchObject({ status: 503, type: 'https://errors.example/unavailable' });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // Once the lock is gone the same request succeeds: nothing was lost.
    const retry = await impatient.request({ method: 'DELETE', url: `/auth/region/api-keys/${second.id}`, headers: { 'x-api-key': r.key } });
    expect(retry.statusCode).toBe(204);
    await impatient.close();
  });

  it('lets two instances start together on an empty database: each migration runs once', async () => {
    const fresh = await createTestDatabase();
    try {
      const [x, y] = await Promise.all([startTestApp({}, fresh), startTestApp({}, fresh)]);
      const applied = await x.app.get(DataSource).query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
      expect(applied.length).toBe(x.app.get(DataSource).migrations.length);
      expect(applied.every((m: { n: number }) => m.n === 1)).toBe(true);
      // And one of them, not both, made the initial region.
      expect(await x.app.get(DataSource).query('SELECT count(*)::int AS n FROM regions')).toEqual([{ n: 1 }]);
      await Promise.all([x.close(), y.close()]);
    } finally {
      await fresh.drop();
    }
  });
});
