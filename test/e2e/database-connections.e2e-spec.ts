import type { Response } from 'light-my-request';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

import { QUERY_TIMEOUT_MARGIN_MS } from '../../src/database/data-source';
import { poolOf } from '../../src/database/pooled-connections';
import { FaultProxy } from '../support/fault-proxy';
import { expectProblem } from '../support/problems';
import { newRegion, type RegionFixture, startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase, usesPostgresServer } from '../support/test-database';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed<T>(work: () => Promise<T>): Promise<{ res: T; ms: number }> {
  const started = Date.now();
  const res = await work();
  return { res, ms: Date.now() - started };
}

const describeOnServer = usesPostgresServer() ? describe : describe.skip;

/**
 * How the service holds its connections where a pooler or other clients share the server:
 * timeouts that travel with each query, a server refusing new connections, connections lost
 * mid-write, and a start before the database is up.
 */
describeOnServer('database connections', () => {
  const STATEMENT_TIMEOUT_MS = 1000;
  const env = {
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    DATABASE_LOCK_TIMEOUT_MS: '800',
    DATABASE_ACQUIRE_TIMEOUT_MS: '1500',
    DATABASE_POOL_SIZE: '4',
  };
  let db: TestDatabase;
  let proxy: FaultProxy;
  let t: TestApp;
  let region: RegionFixture;
  // Looks at the server from outside the service: its sessions, their locks.
  let observer: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await FaultProxy.forUrl(db.env.DATABASE_URL);
    t = await startTestApp({ ...env, DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL) }, db);
    region = await newRegion(t);
    observer = new Client({ connectionString: db.directUrl });
    await observer.connect();
  });
  afterAll(async () => {
    await proxy?.setMode('forward');
    await observer?.end();
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });
  afterEach(async () => proxy.setMode('forward'));

  const regionMe = () => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } });

  /** The service's sessions now waiting for a lock. */
  async function serviceLockWaiters(): Promise<number> {
    const { rows } = await observer.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE 'region-keys-api/%' AND wait_event_type = 'Lock'`,
    );
    return rows[0].n;
  }

  it('cuts a read waiting on a locked table at the statement timeout, and cancels it on the server', async () => {
    const locker = new Client({ connectionString: db.directUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE planets IN ACCESS EXCLUSIVE MODE');
      // A statement outside a transaction: no server-side timeout, the client's own cancels it.
      const { res, ms } = await timed(() => t.request({ method: 'GET', url: '/planets' }));
      expectProblem(res, 503);
      expect(ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
      expect(ms).toBeLessThan(STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS + 1000);
      let waiting = await serviceLockWaiters();
      for (let tries = 0; waiting > 0 && tries < 20; tries++) waiting = await sleep(25).then(serviceLockWaiters);
      expect(waiting).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect((await t.request({ method: 'GET', url: '/planets' })).statusCode).toBe(200);
  });

  it('sets its timeouts in each transaction, and none on the session a pooler could pass on', async () => {
    const dataSource = t.app.get(DataSource);
    const inTransaction = await dataSource.transaction((manager) =>
      manager.query<{ statement_timeout: string; lock_timeout: string }[]>(
        "SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout",
      ),
    );
    expect(inTransaction).toEqual([{ statement_timeout: '1s', lock_timeout: '800ms' }]);
    const outside = await dataSource.query<{ statement_timeout: string }[]>(
      "SELECT current_setting('statement_timeout') AS statement_timeout",
    );
    expect(outside).toEqual([{ statement_timeout: '0' }]);
  });

  it('holds no advisory lock once the migrations have run', async () => {
    const { rows } = await observer.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND d.datname = current_database()`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('waits for a pooled connection while the server refuses new ones, and readiness names why', async () => {
    // One open connection, then the server is full: the pool's attempts to open more are
    // refused, and the requests share the one it has.
    await proxy.setMode('refuse');
    await proxy.setMode('forward');
    // The pool learns of its reset connections as their sockets report it.
    await sleep(100);
    expect((await regionMe()).statusCode).toBe(200);
    await proxy.setMode('full');
    const pool = poolOf(t.app.get(DataSource))!;
    const refusedBefore = pool.connectFailures.refused;
    const answers = await Promise.all(Array.from({ length: 8 }, regionMe));
    expect(answers.map((res) => res.statusCode)).toEqual(Array(8).fill(200));
    expect(pool.connectFailures.refused).toBeGreaterThan(refusedBefore);

    // With no connection left to wait for, requests are refused after the acquire timeout,
    // and readiness says the server is full rather than that it does not answer.
    await proxy.setMode('refuse');
    await proxy.setMode('full');
    const { res, ms } = await timed(regionMe);
    expectProblem(res, 503);
    expect(ms).toBeLessThan(5000);
    const ready = await t.request({ method: 'GET', url: '/health/ready' });
    expectProblem(ready, 503);
    expect(ready.json<{ detail: string }>().detail).toMatch(/refuses new connections \(too many clients\)/);
    await proxy.setMode('forward');
    expect((await regionMe()).statusCode).toBe(200);
  });

  it('answers 503, never 500, when the server ends sessions in the middle of writes', async () => {
    const write = (i: number): Promise<Response> =>
      i % 2 === 0
        ? t.request({
            method: 'POST',
            url: '/auth/region/api-keys',
            headers: { 'x-api-key': region.key },
            payload: { description: `write ${i}` },
          })
        : t.request({
            method: 'POST',
            url: '/user/signup',
            payload: { email: `ended-${i}-${Date.now()}@example.com`, password: 'password-1' },
          });
    // Waves of writes, while every session of the service is ended again and again: some
    // between two statements of a transaction, some mid-statement, some as they connect.
    let writing = true;
    const statuses: number[] = [];
    const writes = (async () => {
      for (let wave = 0; wave < 6; wave++) {
        const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => write(wave * 16 + i)));
        statuses.push(...answers.map((res) => res.statusCode));
      }
      writing = false;
    })();
    let terminated = 0;
    // Every write is answered: were one left hanging, the ending stops after 20 s and the
    // test fails on it rather than on its own timeout.
    const deadline = Date.now() + 20_000;
    while (writing && Date.now() < deadline) {
      const { rows } = await observer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE 'region-keys-api/%'`,
      );
      terminated += rows.length;
    }
    expect(writing).toBe(false);
    await writes;
    expect(terminated).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    // The last sessions ended are dropped from the pool as their sockets report it.
    await sleep(100);
    expect((await regionMe()).statusCode).toBe(200);
  });

  it('starts while the database is down: retries, then serves once it comes', async () => {
    await proxy.setMode('refuse');
    const late = startTestApp(
      { ...env, DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL), DATABASE_CONNECT_TIMEOUT_MS: '20000' },
      db,
    );
    await sleep(1500);
    await proxy.setMode('forward');
    const second = await late;
    try {
      expect(second.logs.join('\n')).toMatch(/The database is unavailable \(.*ECONNREFUSED.*\); retrying/);
      expect((await second.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    } finally {
      await second.close();
    }

    // And gives up with the cause once DATABASE_CONNECT_TIMEOUT_MS has passed.
    await proxy.setMode('refuse');
    const { res: failed, ms } = await timed(() =>
      startTestApp(
        { ...env, DATABASE_URL: proxy.rewrite(db.env.DATABASE_URL), DATABASE_CONNECT_TIMEOUT_MS: '600' },
        db,
      ).then(
        () => null,
        (err: Error) => err,
      ),
    );
    expect(failed?.message).toMatch(/ECONNREFUSED/);
    expect(ms).toBeLessThan(5000);
  });
});
