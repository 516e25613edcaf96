import type { Response } from 'light-my-request';
import { Client } from 'pg';

import { expectProblem } from '../support/problems';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';
import { newUser } from '../support/users';
import { createPlanet, fixture, multipart } from './planets-support';

// Requests waiting for a locked row (another instance, or an operator's session, holds it)
// must neither take the connections other routes need nor wait past the lock timeout.
// Row locks between sessions exist only on a PostgreSQL server.
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnServer('waiting for a locked row', () => {
  let db: TestDatabase;
  let blocker: Client;
  // Not the blocker: inside its transaction, pg_stat_activity would show one cached snapshot.
  let observer: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    blocker = new Client({ connectionString: db.directUrl });
    observer = new Client({ connectionString: db.directUrl });
    await blocker.connect();
    await observer.connect();
  });
  afterAll(async () => {
    await blocker?.end();
    await observer?.end();
    await db?.drop();
  });

  /** Holds the row's lock, as a change on another instance would, while `run` runs. */
  async function whileLocked<T>(table: 'regions' | 'planets', id: string, run: () => Promise<T>): Promise<T> {
    await blocker.query('BEGIN');
    try {
      await blocker.query(`SELECT id FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
      return await run();
    } finally {
      await blocker.query('ROLLBACK');
    }
  }

  /** The service's sessions now waiting for a lock in PostgreSQL. */
  async function lockWaiters(): Promise<number> {
    const { rows } = await observer.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE 'region-keys-api/%' AND wait_event_type = 'Lock'`,
    );
    return rows[0].n;
  }

  async function regionWithKeys(
    t: TestApp,
    extra: number,
  ): Promise<{ region: RegionFixture; keys: { id: string; key: string }[] }> {
    const region = await newRegion(t);
    const keys = [];
    for (let i = 0; i < extra; i++) keys.push(await createKey(t, region.key));
    return { region, keys };
  }

  const deleteKey = (t: TestApp, region: RegionFixture, id: string) =>
    t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': region.key } });

  it('leaves connections for other routes while many requests wait for one region', async () => {
    // A patient lock timeout and a small pool: the waiting deletes outnumber the connections.
    const t = await startTestApp(
      { DATABASE_POOL_SIZE: '4', DATABASE_LOCK_TIMEOUT_MS: '20000', DATABASE_ACQUIRE_TIMEOUT_MS: '1500' },
      db,
    );
    try {
      const { region, keys } = await regionWithKeys(t, 10);
      const other = await newRegion(t);
      const user = await newUser(t);
      const deletes = await whileLocked('regions', region.regionId, async () => {
        const pending = keys.map(({ id }) => deleteKey(t, region, id));
        for (let tries = 0; tries < 500 && (await lockWaiters()) === 0; tries++) await sleep(20);
        // The lock is still held: these need connections of their own, and must get them.
        const reads: [string, Response][] = [
          ['planets', await t.request({ method: 'GET', url: '/planets' })],
          [
            'another region',
            await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': other.key } }),
          ],
          [
            'another region, a new key',
            await t.request({
              method: 'POST',
              url: '/auth/region/api-keys',
              headers: { 'x-api-key': other.key },
              payload: {},
            }),
          ],
          ['me', await t.request({ method: 'GET', url: '/me', headers: { authorization: user.bearer } })],
        ];
        for (const [what, res] of reads) expect({ what, ok: res.statusCode < 300 }).toEqual({ what, ok: true });
        // One waits inside PostgreSQL; the rest of this region's deletes queue without a connection.
        expect(await lockWaiters()).toBe(1);
        return pending;
      });
      // Once the lock is gone, every waiting delete goes through.
      expect((await Promise.all(deletes)).map((res) => res.statusCode)).toEqual(Array(keys.length).fill(204));
    } finally {
      await t.close();
    }
  });

  it('answers every waiter 503 with Retry-After within the lock timeout, however many queue', async () => {
    const LOCK_TIMEOUT_MS = 1000;
    const t = await startTestApp(
      {
        DATABASE_POOL_SIZE: '3',
        DATABASE_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
        DATABASE_ACQUIRE_TIMEOUT_MS: '10000',
      },
      db,
    );
    try {
      const { region, keys } = await regionWithKeys(t, 12);
      const answers = await whileLocked('regions', region.regionId, () =>
        Promise.all(
          keys.map(async ({ id }) => {
            const started = Date.now();
            const res = await deleteKey(t, region, id);
            return { res, ms: Date.now() - started };
          }),
        ),
      );
      for (const { res, ms } of answers) {
        expectProblem(res, 503, 'unavailable');
        expect(res.headers['retry-after']).toBe('1');
        // Queued one after another inside PostgreSQL, the last would wait four timeouts.
        expect(ms).toBeLessThan(LOCK_TIMEOUT_MS + 1500);
      }
      // Nothing changed: every key is still there.
      const after = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } });
      expect(after.json().apiKeys).toHaveLength(keys.length + 1);
    } finally {
      await t.close();
    }
  });

  it("answers another user's changes to a planet 403 at once, without waiting for its locked row", async () => {
    // A lock timeout no refusal could outwait: one that queued for the row would end a 503.
    const t = await startTestApp({ DATABASE_LOCK_TIMEOUT_MS: '3000' }, db);
    try {
      const [alice, bob] = [await newUser(t), await newUser(t)];
      const planet = await createPlanet(t, alice);
      const etag = (await t.request({ method: 'GET', url: `/planets/${planet.id}` })).headers.etag as string;
      const url = `/planets/${planet.id}`;
      const image = multipart([
        { name: 'image', filename: 'mars.png', type: 'image/png', content: fixture('mars.png') },
      ]);
      const refusals = await whileLocked('planets', String(planet.id), async () => [
        await t.request({ method: 'PUT', url, headers: { authorization: bob.bearer }, payload: { name: 'Bob' } }),
        await t.request({
          method: 'PUT',
          url,
          headers: { authorization: bob.bearer, 'if-match': etag },
          payload: { name: 'Bob' },
        }),
        await t.request({ method: 'DELETE', url, headers: { authorization: bob.bearer } }),
        await t.request({ method: 'DELETE', url, headers: { authorization: bob.bearer, 'if-match': etag } }),
        await t.request({
          method: 'POST',
          url: `${url}/image`,
          headers: { authorization: bob.bearer, ...image.headers },
          payload: image.payload,
        }),
      ]);
      for (const res of refusals) expectProblem(res, 403, 'forbidden');
      // The lock is gone and nothing changed: the creator's conditional change goes through.
      const own = await t.request({
        method: 'PUT',
        url,
        headers: { authorization: alice.bearer, 'if-match': etag },
        payload: { name: 'Alice' },
      });
      expect(own.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
