import { randomUUID } from 'node:crypto';

import type { DataSource } from 'typeorm';

import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/data-source';
import { KeyRollAndRegionEvents1763900000000 } from '../../src/region-keys/migrations/1763900000000-key-roll-and-region-events';
import { KeyPermissionsAndAllowlists1764100000000 } from '../../src/region-keys/migrations/1764100000000-key-permissions-and-allowlists';
import { KeyClientsAndHourlyUsage1764700000000 } from '../../src/region-keys/migrations/1764700000000-key-clients-and-hourly-usage';
import { KeyLeakReports1764710000000 } from '../../src/region-keys/migrations/1764710000000-key-leak-reports';
import { KeyRateLimits1764720000000 } from '../../src/region-keys/migrations/1764720000000-key-rate-limits';
import { runCliInProcess } from '../support/cli';
import { runProcess } from '../support/processes';
import { createPersistentTestDatabase, createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * `cli migration show|run|revert` on the built code, as `npm run migration:show|run|revert`
 * run it (the global setup builds): each command exits once done, on the embedded database
 * as on a PostgreSQL server.
 */
// Four CLI processes, each opening the database, on a busy machine.
jest.setTimeout(240_000);

/** Ample for a command on a busy machine; one that never exits fails the test instead of hanging it. */
const EXITS_WITHIN_MS = 60_000;

const migration = (command: string, env: Record<string, string>) =>
  runProcess('dist/src/cli.js', ['migration', command], { NODE_ENV: 'test', ...env }, { timeoutMs: EXITS_WITHIN_MS });

/** The same command line with the CLI's code run in this process: what the rollback tests check is its answer, not its exit. */
const migrationInProcess = (command: string, env: Record<string, string>) =>
  runCliInProcess(['migration', command], { NODE_ENV: 'test', ...env });

async function onDatabase<T>(env: Record<string, string>, work: (db: DataSource) => Promise<T>): Promise<T> {
  const { dataSource, embedded } = await openDatabase(loadConfig(env));
  try {
    await dataSource.initialize();
    return await work(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

const appliedMigrations = (env: Record<string, string>): Promise<string[]> =>
  onDatabase(env, async (db) => {
    const [{ missing }] = await db.query<{ missing: boolean }[]>("SELECT to_regclass('migrations') IS NULL AS missing");
    if (missing) return [];
    const rows = await db.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id');
    return rows.map((row) => row.name);
  });

/** Adds a key to a region (made when absent) with the columns given; returns its id. */
async function insertKey(db: DataSource, regionId: string, columns: Record<string, unknown> = {}): Promise<string> {
  await db.query(`INSERT INTO regions (id, name) VALUES ($1, 'Region') ON CONFLICT DO NOTHING`, [regionId]);
  const id = randomUUID();
  const all: Record<string, unknown> = {
    id,
    region_id: regionId,
    token_hash: id.replace(/-/g, '').padEnd(64, '0'),
    token_preview: 'rk_preview',
    permissions: ['region:read', 'keys:write'],
    ...columns,
  };
  const names = Object.keys(all);
  await db.query(
    `INSERT INTO api_keys (${names.map((name) => `"${name}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    Object.values(all),
  );
  return id;
}

let database: TestDatabase;
beforeEach(async () => {
  database = await createPersistentTestDatabase({ empty: true });
});
afterEach(async () => database.drop());

it('shows without migrating, runs, reverts the last migration and runs it again, exiting each time', async () => {
  const shown = await migration('show', database.env);
  expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
  const pending = shown.stdout.trim().split('\n');
  expect(pending.length).toBeGreaterThan(1);
  expect(pending.every((line) => line.startsWith('[ ] '))).toBe(true);
  expect(await appliedMigrations(database.env)).toEqual([]);

  const run = await migration('run', database.env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const all = await appliedMigrations(database.env);
  expect(all).toHaveLength(pending.length);

  const revert = await migration('revert', database.env);
  expect({ code: revert.code, stderr: revert.stderr }).toEqual({ code: 0, stderr: '' });
  expect(revert.stdout).toBe(`Reverted: ${all[all.length - 1]}\n`);
  expect(await appliedMigrations(database.env)).toEqual(all.slice(0, -1));

  const again = await migration('run', database.env);
  expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
  expect(again.stdout).toBe(`Applied: ${all[all.length - 1]}\n`);
  expect(await appliedMigrations(database.env)).toEqual(all);
});

describe('a rollback never makes a key more powerful', () => {
  it('refuses to revert the key expiry while an unexpired key has one, and revokes expired keys as of their expiry', async () => {
    // A migrated database (a copy of the template) rather than the empty one: no initdb, no full run.
    await database.drop();
    database = await createPersistentTestDatabase();
    const migrated = await appliedMigrations(database.env);
    const all = migrated.slice(0, migrated.indexOf('KeyExpiryAndUpdates1764600000000') + 1);
    expect(all.length).toBeGreaterThan(0);
    // The migrations after it revert first, newest first: on a database without keys or events they refuse nothing.
    for (const name of migrated.slice(all.length).reverse())
      expect(await migrationInProcess('revert', database.env)).toEqual({
        code: 0,
        stdout: `Reverted: ${name}\n`,
        stderr: '',
      });
    const regionId = randomUUID();
    const expiredAt = new Date(Date.now() - 3_600_000);
    const [expiring, expired, rolledAway] = await onDatabase(database.env, async (db) => [
      await insertKey(db, regionId, { expires_at: new Date(Date.now() + 86_400_000) }),
      await insertKey(db, regionId, { expires_at: expiredAt }),
      // Its roll ended before its expiry: stopped already, so not in the way.
      await insertKey(db, regionId, { expires_at: new Date(Date.now() + 86_400_000), revokes_at: expiredAt }),
    ]);

    const refused = await migrationInProcess('revert', database.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: 1 active API key\(s\) have an expiry \(expires_at\).*would make them permanent\. Revoke them.*Nothing was changed\.\n$/,
    );
    expect(await appliedMigrations(database.env)).toEqual(all);

    await onDatabase(database.env, (db) =>
      db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [expiring]),
    );
    const reverted = await migrationInProcess('revert', database.env);
    expect({ code: reverted.code, stderr: reverted.stderr }).toEqual({ code: 0, stderr: '' });
    // Run again, the migration finds every key that had an expiry revoked: none came back permanent.
    expect((await migrationInProcess('run', database.env)).code).toBe(0);
    const keys = await onDatabase(database.env, (db) =>
      db.query<{ id: string; revoked_at: Date | null }[]>('SELECT id, revoked_at FROM api_keys WHERE region_id = $1', [
        regionId,
      ]),
    );
    for (const id of [expired, rolledAway])
      expect(keys.find((key) => key.id === id)?.revoked_at?.toISOString()).toBe(expiredAt.toISOString());
    expect(keys.every((key) => key.revoked_at !== null)).toBe(true);
  });

  it('refuses to revert key permissions and allowlists, scheduled stops or rate limits, while a working key has them', async () => {
    const migrated = await createTestDatabase();
    try {
      await onDatabase(migrated.env, async (db) => {
        const regionId = randomUUID();
        await insertKey(db, regionId, { permissions: ['region:read'] });
        await insertKey(db, regionId, { allowed_cidrs: ['203.0.113.0/24'] });
        await insertKey(db, regionId, { revokes_at: new Date(Date.now() + 3_600_000) });
        // Stopped already: none of these counts.
        await insertKey(db, regionId, { permissions: ['region:read'], revoked_at: new Date() });
        await insertKey(db, regionId, { allowed_cidrs: ['203.0.113.0/24'], revokes_at: new Date(Date.now() - 1000) });
        const down = async (migration: { down(q: unknown): Promise<void> }) => {
          const runner = db.createQueryRunner();
          await runner.startTransaction();
          try {
            await migration.down(runner);
          } finally {
            await runner.rollbackTransaction();
            await runner.release();
          }
        };
        await expect(down(new KeyPermissionsAndAllowlists1764100000000())).rejects.toThrow(
          /^2 active API key\(s\) have limited permissions or an address allowlist .* let them do everything from any address\. Revoke them/,
        );
        await expect(down(new KeyRollAndRegionEvents1763900000000())).rejects.toThrow(
          /^1 active API key\(s\) are scheduled to stop \(revokes_at, after a roll\).*would make them permanent/,
        );
        // A limit of its own on a working key; stopped keys' limits are in nobody's way.
        await insertKey(db, regionId, { rate_limit_requests: 10, rate_limit_per_seconds: 60 });
        await insertKey(db, regionId, { rate_limit_requests: 10, rate_limit_per_seconds: 60, revoked_at: new Date() });
        await insertKey(db, regionId, {
          rate_limit_requests: 10,
          rate_limit_per_seconds: 60,
          expires_at: new Date(Date.now() - 1000),
        });
        await expect(down(new KeyRateLimits1764720000000())).rejects.toThrow(
          /^1 active API key\(s\) have a rate limit of their own \(rateLimit\).*any number of requests\. Revoke them/,
        );
        // No leak reported yet: the leak reports revert (their column and types go); once one is, never.
        await expect(down(new KeyLeakReports1764710000000())).resolves.toBeUndefined();
        await db.query(
          `INSERT INTO region_events (id, region_id, type, occurred_at, actor_type, api_key_id, api_key_token_preview, client_address)
           VALUES ($1, $2, 'api_key.leak_reported', now(), 'reporter', $3, 'rk_preview', '203.0.113.7')`,
          [randomUUID(), regionId, randomUUID()],
        );
        await expect(down(new KeyLeakReports1764710000000())).rejects.toThrow(
          /^The audit trail holds 1 event\(s\) of leak reports.*cannot be reverted\. Nothing was changed\.$/,
        );
      });
    } finally {
      await migrated.drop();
    }
  });
});

it("reverts key clients and hourly usage without touching the events' links, and runs again", async () => {
  const migrated = await createTestDatabase();
  try {
    await onDatabase(migrated.env, async (db) => {
      const regionId = randomUUID();
      const [oldKey, newKey] = [await insertKey(db, regionId), await insertKey(db, regionId)];
      await db.query(
        `INSERT INTO region_events (id, region_id, type, occurred_at, actor_type, api_key_id, api_key_token_preview,
           api_key_replaced_by_id, api_key_replaced_by_token_preview)
         VALUES ($1, $2, 'api_key.rolled', now(), 'operator', $3, 'rk_old', $4, 'rk_new')`,
        [randomUUID(), regionId, oldKey, newKey],
      );
      const runner = db.createQueryRunner();
      await runner.startTransaction();
      try {
        const migration = new KeyClientsAndHourlyUsage1764700000000();
        await migration.down(runner);
        const [{ tables }] = await runner.query(
          `SELECT count(*)::int AS tables FROM pg_tables WHERE tablename IN ('api_key_clients', 'api_key_hourly_usage')`,
        );
        expect(tables).toBe(0);
        await migration.up(runner);
        const links = await runner.query(
          'SELECT api_key_replaced_by_id AS id, api_key_replaced_by_token_preview AS preview FROM region_events WHERE api_key_id = $1',
          [oldKey],
        );
        expect(links).toEqual([{ id: newKey, preview: 'rk_new' }]);
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });
  } finally {
    await migrated.drop();
  }
});
