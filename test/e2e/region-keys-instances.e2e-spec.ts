import { jest } from '@jest/globals';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import { createKey, newRegion, startTestApp, TestApp, type TwoApps, twoInstances } from '../support/test-app';
import { createTestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * Two server instances on one PostgreSQL server, as in a deployment with several replicas.
 * The embedded database serves one process only, so this suite runs in the PostgreSQL
 * pass of the test run (DATABASE_URL set); .ci/run always runs that pass.
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('two instances on one PostgreSQL', () => {
  let apps: TwoApps;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    apps = await twoInstances();
    ({ a, b } = apps);
  });
  afterAll(async () => apps?.close());

  const regionOf = (t: TestApp, key: string) =>
    t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });

  it('keeps exactly one key when all keys are deleted at once through both instances', async () => {
    const n = 30;
    const r = await newRegion(a);
    const keys = [{ id: r.keyId, key: r.key }];
    for (let i = 1; i < n; i++) keys.push(await createKey(i % 2 ? a : b, r.key));
    const results = await Promise.all(
      keys.map(({ id, key }, i) =>
        (i % 2 ? a : b).request({
          method: 'DELETE',
          url: `/auth/region/api-keys/${id}`,
          headers: { 'x-api-key': key },
        }),
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

  it('keeps exactly one permanent manager when every key takes that away from itself at once (PATCH), through both instances', async () => {
    const n = 16;
    const r = await newRegion(a);
    const keys = [{ id: r.keyId, key: r.key }];
    for (let i = 1; i < n; i++) keys.push(await createKey(i % 2 ? a : b, r.key));
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const results = await Promise.all(
      keys.map(({ id, key }, i) =>
        (i % 2 ? a : b).request({
          method: 'PATCH',
          url: `/auth/region/api-keys/${id}`,
          headers: { 'x-api-key': key, 'content-type': 'application/merge-patch+json' },
          // Half lose keys:write, half get an expiry: either way they stop counting as managers.
          payload: JSON.stringify(i % 2 ? { permissions: ['region:read'] } : { expiresAt }),
        }),
      ),
    );
    const statuses = results.map((res) => res.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(n - 1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
    const [{ managers, updates }] = await a.app.get(DataSource).query(
      `SELECT (SELECT count(*)::int FROM api_keys WHERE region_id = $1 AND revoked_at IS NULL AND revokes_at IS NULL
                 AND expires_at IS NULL AND 'keys:write' = ANY(permissions)) AS managers,
              (SELECT count(*)::int FROM region_events WHERE region_id = $1 AND type = 'api_key.updated') AS updates`,
      [r.regionId],
    );
    expect({ managers, updates }).toEqual({ managers: 1, updates: n - 1 });
  });

  it('never leaves a region without a key that keeps working under concurrent rolls and deletes, and records each change', async () => {
    const n = 12;
    const r = await newRegion(a);
    const keys = [{ id: r.keyId, key: r.key }];
    for (let i = 1; i < n; i++) keys.push(await createKey(i % 2 ? a : b, r.key));
    const via = (i: number) => (i % 2 ? a : b);
    const del = (i: number, id: string, key: string) =>
      via(i).request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } });
    const roll = (i: number, id: string, key: string, revokeOldAfterSeconds: number) =>
      via(i).request({
        method: 'POST',
        url: `/auth/region/api-keys/${id}/roll`,
        headers: { 'x-api-key': key },
        payload: { revokeOldAfterSeconds },
      });
    // Half the keys are rolled: they keep working for an hour, their replacements for good.
    const scheduled = keys.slice(0, n / 2);
    const permanent = keys.slice(n / 2);
    for (const [i, { id, key }] of scheduled.entries()) {
      const res = await roll(i, id, key, 3600);
      expect(res.statusCode).toBe(201);
      permanent.push(res.json());
    }
    const statuses: number[] = [];
    const rolled: { id: string; key: string }[] = [];
    const run = async (requests: Promise<{ statusCode: number; json: () => any }>[]) => {
      const results = await Promise.all(requests);
      for (const res of results) {
        statuses.push(res.statusCode);
        if (res.statusCode === 201) rolled.push(res.json());
      }
      return results.map((res) => res.statusCode);
    };

    // Every key that keeps working is deleted at once, through both instances, by keys about
    // to stop: exactly one of them must be refused.
    await run(permanent.map(({ id }, i) => del(i, id, scheduled[i % scheduled.length].key)));
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
    const [survivor] = permanent.filter((_, i) => statuses[i] === 409);
    // Then the survivor is rolled (revoked at once by another key, or later by itself: a key
    // rolling itself keeps working a minute at least) and deleted, and the keys about to stop
    // delete themselves, all at the same time.
    const [firstRoll, secondRoll] = await run([
      roll(0, survivor.id, scheduled[2].key, 0),
      roll(1, survivor.id, survivor.key, 60),
      del(0, survivor.id, scheduled[0].key),
      del(1, survivor.id, scheduled[1].key),
      ...scheduled.map(({ id, key }, i) => del(i, id, key)),
    ]);
    expect(statuses.every((s) => [201, 204, 401, 404, 409].includes(s))).toBe(true);
    // A key is rolled once: the other roll finds it already rolled (409) or revoked (404).
    expect([firstRoll, secondRoll].filter((s) => s === 201)).toHaveLength(1);

    const db = a.app.get(DataSource);
    const [{ count }] = await db.query(
      'SELECT count(*)::int AS count FROM api_keys WHERE region_id = $1 AND revoked_at IS NULL AND revokes_at IS NULL',
      [r.regionId],
    );
    expect(count).toBeGreaterThanOrEqual(1);
    // Every change has its event: the region and its first key, the keys made before, two per roll, one per delete.
    const changes = n - 1 + 2 * (scheduled.length + rolled.length) + statuses.filter((s) => s === 204).length;
    const [{ events }] = await db.query('SELECT count(*)::int AS events FROM region_events WHERE region_id = $1', [
      r.regionId,
    ]);
    expect(events).toBe(1 + changes);

    // Once every scheduled revocation has passed, on both instances, a key still works.
    const later = Date.now() + 2 * 3600_000;
    for (const t of [a, b]) jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date(later));
    try {
      for (const t of [a, b]) {
        const working = [];
        for (const { key } of [...keys, ...permanent, ...rolled]) {
          const res = await regionOf(t, key);
          if (res.statusCode === 200) working.push(res.json());
        }
        expect(working.length).toBeGreaterThanOrEqual(1);
        expect(working[0].apiKeys).toHaveLength(count);
        expect(working[0].apiKeys.every((k: { revokesAt: string | null }) => k.revokesAt === null)).toBe(true);
      }
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('stops a key revoked through one instance from authenticating on the other at once', async () => {
    const r = await newRegion(a);
    const second = await createKey(a, r.key);
    expect((await regionOf(b, second.key)).statusCode).toBe(200);
    const res = await a.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${second.id}`,
      headers: { 'x-api-key': r.key },
    });
    expect(res.statusCode).toBe(204);
    expect((await regionOf(b, second.key)).statusCode).toBe(401);
  });

  it('answers 503 with Retry-After instead of hanging when the region row stays locked', async () => {
    const impatient = await startTestApp({ DATABASE_LOCK_TIMEOUT_MS: '300' }, apps.database);
    const r = await newRegion(impatient);
    const second = await createKey(impatient, r.key);
    const blocker = new Client({ connectionString: apps.database.directUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM regions WHERE id = $1 FOR UPDATE', [r.regionId]);
      const res = await impatient.request({
        method: 'DELETE',
        url: `/auth/region/api-keys/${second.id}`,
        headers: { 'x-api-key': r.key },
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toMatchObject({ status: 503, type: '/problems/unavailable' });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // Once the lock is gone the same request succeeds: nothing was lost.
    const retry = await impatient.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${second.id}`,
      headers: { 'x-api-key': r.key },
    });
    expect(retry.statusCode).toBe(204);
    await impatient.close();
  });

  it('lets two instances start together on an empty database: each migration runs once', async () => {
    const fresh = await createTestDatabase();
    try {
      const [x, y] = await Promise.all([startTestApp({}, fresh), startTestApp({}, fresh)]);
      const applied = await x.app
        .get(DataSource)
        .query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
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
