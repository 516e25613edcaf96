import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/data-source';
import { runProcess } from '../support/processes';
import { createPersistentTestDatabase, TestDatabase } from '../support/test-database';

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

async function appliedMigrations(env: Record<string, string>): Promise<string[]> {
  const { dataSource, embedded } = await openDatabase(loadConfig(env));
  try {
    await dataSource.initialize();
    const [{ missing }] = await dataSource.query<{ missing: boolean }[]>(
      "SELECT to_regclass('migrations') IS NULL AS missing",
    );
    if (missing) return [];
    const rows = await dataSource.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id');
    return rows.map((row) => row.name);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
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
