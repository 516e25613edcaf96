import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/data-source';
import { runProcess } from '../support/processes';
import { createPersistentTestDatabase, TestDatabase } from '../support/test-database';

/**
 * The TypeORM CLI on the built ormconfig, as `npm run migration:run` and `migration:revert`
 * run it (the global setup builds): each command exits once done, on the embedded database
 * as on a PostgreSQL server.
 */
jest.setTimeout(120_000);

/** Ample for a command on a busy machine; one that never exits fails the test instead of hanging it. */
const EXITS_WITHIN_MS = 60_000;

const typeorm = (command: string, env: Record<string, string>) =>
  runProcess('node_modules/typeorm/cli.js', [command, '-d', 'dist/ormconfig.js'], env, { timeoutMs: EXITS_WITHIN_MS });

async function appliedMigrations(env: Record<string, string>): Promise<string[]> {
  const { dataSource, embedded } = await openDatabase(loadConfig(env));
  try {
    await dataSource.initialize();
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

it('reverts the last migration and runs it again, exiting each time', async () => {
  const run = await typeorm('migration:run', database.env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const all = await appliedMigrations(database.env);
  expect(all.length).toBeGreaterThan(1);

  const revert = await typeorm('migration:revert', database.env);
  expect({ code: revert.code, stderr: revert.stderr }).toEqual({ code: 0, stderr: '' });
  expect(revert.stdout).toContain(`Migration ${all[all.length - 1]} has been reverted successfully.`);
  expect(await appliedMigrations(database.env)).toEqual(all.slice(0, -1));

  const again = await typeorm('migration:run', database.env);
  expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
  expect(await appliedMigrations(database.env)).toEqual(all);
});
