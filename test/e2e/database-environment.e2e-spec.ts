import { jest } from '@jest/globals';

import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/data-source';
import { runCliInProcess } from '../support/cli';
import { runProcess } from '../support/processes';
import { newRegion, startTestApp } from '../support/test-app';
import { createPersistentTestDatabase, TestDatabase } from '../support/test-database';

/**
 * Mistakes that must not reach the wrong data: a database is stamped with the environment of
 * the first server that starts on it, and the other environment's server and CLI refuse it; a
 * sandbox reset takes only a database stamped sandbox; a build refuses a schema that a newer
 * build migrated. Each test starts on a migrated database no server has stamped yet.
 */
// Several starts of a server and the CLI each, on a busy machine.
jest.setTimeout(300_000);

const CLI = 'dist/src/cli.js';
// Samples are a sandbox's own rule (SEED_SAMPLE_DATA cannot be false there).
const SANDBOX = { API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: '' };

let database: TestDatabase;
beforeEach(async () => {
  database = await createPersistentTestDatabase();
});
afterEach(() => database.drop());

/**
 * The CLI in this process: what it refuses is the question here, not how a process exits
 * (the processes suite runs it as one, and the last test below does too, for its warnings on
 * stderr).
 */
const cli = (args: string[], env: Record<string, string> = {}) =>
  runCliInProcess([...args, '--json'], { NODE_ENV: 'test', ...database.env, ...env });

/** Runs `text` on the database while no app has it open. */
async function query<T>(text: string, parameters: unknown[] = []): Promise<T> {
  const { dataSource, embedded } = await openDatabase(loadConfig({ NODE_ENV: 'test', ...database.env }));
  try {
    await dataSource.initialize();
    return await dataSource.query<T>(text, parameters);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

/** Starts and stops a server on the database, as its first start after the upgrade would. */
async function startAndStop(env: Record<string, string>) {
  const t = await startTestApp(env, database);
  const region = await newRegion(t);
  await t.close();
  return { logs: t.logs, region };
}

it('a live server stamps the database; a sandbox server, its CLI and its reset then refuse it', async () => {
  const { logs } = await startAndStop({});
  expect(logs.join('\n')).toContain('Stamped the database live');
  expect(await query('SELECT environment FROM database_environment')).toEqual([{ environment: 'live' }]);

  await expect(startTestApp(SANDBOX, database)).rejects.toThrow(
    'This database is stamped live, and this configuration is sandbox (API_ENVIRONMENT=sandbox): refusing to use it.',
  );
  const [list, reset] = [await cli(['region', 'list'], SANDBOX), await cli(['sandbox', 'reset'], SANDBOX)];
  for (const refused of [list, reset]) {
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: This database is stamped live, and this configuration is sandbox/m);
  }
});

it('a sandbox server stamps it sandbox, and then a live server refuses it', async () => {
  await startAndStop(SANDBOX);
  await expect(startTestApp({}, database)).rejects.toThrow(
    /^This database is stamped sandbox, and this configuration is live/,
  );
});

it('`sandbox reset` refuses a database no server has stamped, and stamps nothing itself', async () => {
  const refused = await cli(['sandbox', 'reset'], SANDBOX);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^error: This database is not stamped, not sandbox: nothing was changed/);
  expect(await query('SELECT environment FROM database_environment')).toEqual([]);
});

it('`sandbox reset` still refuses a live database that a sandbox server stamped by mistake, by its live keys', async () => {
  // A live database from before the stamp, on which a misconfigured sandbox server starts first.
  const { region } = await startAndStop({});
  await query('DELETE FROM database_environment');
  await startAndStop(SANDBOX);
  const refused = await cli(['sandbox', 'reset'], SANDBOX);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(
    /This database holds live keys \(rk_…\): it is not a sandbox database.*Nothing was changed/,
  );
  expect(await query('SELECT id FROM regions WHERE id = $1', [region.regionId])).toHaveLength(1);
});

it('a build refuses a schema with migrations it does not know, naming them; `migration show` lists them', async () => {
  await query(`INSERT INTO migrations ("timestamp", name) VALUES (1899999999999, 'FromANewerBuild1899999999999')`);
  await expect(startTestApp({}, database)).rejects.toThrow(
    'The database has migrations this build does not know: FromANewerBuild1899999999999.',
  );
  const shown = await cli(['migration', 'show']);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout)).toMatchObject({ unknown: ['FromANewerBuild1899999999999'], pending: [] });
  const run = await cli(['migration', 'run']);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('does not know: FromANewerBuild1899999999999');
});

it('warns at start, in the log, about a variable that looks like a setting, without its value', async () => {
  const t = await startTestApp({ DATABSE_URL: 'postgres://app:hunter2@db/app' }, database);
  await t.close();
  const warnings = t.logs.filter((line) => line.includes('DATABSE_URL'));
  expect(warnings).toHaveLength(1);
  expect(JSON.parse(warnings[0])).toMatchObject({
    level: 40,
    msg: 'DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL?',
  });
  expect(t.logs.join('\n')).not.toContain('hunter2');
  // A process: the warning is logged on its stderr, as the operator sees it.
  const listed = await runProcess(CLI, ['region', 'list', '--json'], {
    NODE_ENV: 'test',
    ...database.env,
    REDIS_HOST: 'cache',
  });
  expect(listed.code).toBe(0);
  expect(listed.stderr).toContain('REDIS_HOST is not a setting and is ignored; did you mean REDIS_URL?');
});
