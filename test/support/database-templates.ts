import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openAsBlob, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from 'pg';
import type { DataSource } from 'typeorm';

import { loadConfig } from '../../src/config/app-config';
import { openDatabase } from '../../src/database/data-source';
import { runMigrationsLocked } from '../../src/database/migration-runner';

/**
 * Every test database starts migrated, copied from a template made once per run: a fresh
 * embedded database costs an initdb in WebAssembly plus the migrations (seconds on this
 * kind of machine, for each of the suite's apps), a copy a fraction of that. The global
 * setup makes them and hands them to the test workers through these variables:
 */
export const TEMPLATE_ENV = {
  /** An image of a migrated embedded database: `DATA_DIR=memory://<image>` starts from it. */
  embeddedImage: 'TEST_EMBEDDED_IMAGE',
  /** A migrated embedded DATA_DIR, copied for tests whose database outlives an app. */
  embeddedDataDir: 'TEST_EMBEDDED_DATA_DIR',
  /** A migrated database on the PostgreSQL server (with DATABASE_URL), for CREATE DATABASE … TEMPLATE. */
  serverDatabase: 'TEST_DATABASE_TEMPLATE',
  /** Where the embedded templates are, removed by the teardown. */
  directory: 'TEST_TEMPLATES_DIR',
} as const;

/**
 * Set by a test run that starts another Jest run on a copy of the checkout (the scaffold's
 * test, new-module.e2e-spec.ts): its embedded templates (the two variables above, not the
 * directory, which stays its run's to remove) serve the run it starts, whose apps apply at
 * start the migrations the copy adds, and dist/ is current (the scaffold compiled it).
 */
export const HANDED_DOWN = 'TEST_HANDED_DOWN';

/**
 * The PostgreSQL server itself, for what the tests do as its administrator: create, migrate
 * and drop their databases, and the sessions a test holds or watches on the server (a
 * blocker, pg_stat_activity, pg_terminate_backend). TEST_DATABASE_ADMIN_URL when DATABASE_URL
 * is a connection pooler: through a pooler, CREATE DATABASE … TEMPLATE finds the template
 * busy with the pooler's idle server connections, and a DROP does not reach the pooler's
 * connections to the database. Otherwise DATABASE_URL.
 */
export function adminServerUrl(): string | undefined {
  return process.env.TEST_DATABASE_ADMIN_URL || process.env.DATABASE_URL || undefined;
}

export async function makeDatabaseTemplates(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL && adminServerUrl();
  if (serverUrl) {
    const name = `test_template_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    await migrate({ DATABASE_URL: withDatabase(serverUrl, name) });
    process.env[TEMPLATE_ENV.serverDatabase] = name;
    return;
  }
  if (process.env[HANDED_DOWN] && process.env[TEMPLATE_ENV.embeddedImage]) return;
  const directory = mkdtempSync(join(tmpdir(), 'rk-templates-'));
  process.env[TEMPLATE_ENV.directory] = directory;
  const image = join(directory, 'migrated.tar');
  await migrate({ DATA_DIR: 'memory://' }, async (dataSource, embedded) => {
    // Each app start loads the whole image into PGlite's in-memory file system: without the two
    // template databases, which no test uses (nothing creates a database on PGlite), it is a
    // third smaller, and each start has that much less to write.
    for (const template of ['template0', 'template1']) {
      await dataSource.query(`ALTER DATABASE ${template} WITH IS_TEMPLATE false`);
      await dataSource.query(`DROP DATABASE ${template}`);
    }
    await dataSource.destroy();
    await embedded.saveImage(image);
  });
  process.env[TEMPLATE_ENV.embeddedImage] = image;

  // The same database as a directory, laid out as DATA_DIR is (its pgdata/ inside).
  const dataDir = join(directory, 'data-dir');
  mkdirSync(dataDir);
  /* eslint-disable-next-line @typescript-eslint/no-require-imports */
  const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const db = await PGlite.create({ dataDir: join(dataDir, 'pgdata'), loadDataDir: await openAsBlob(image) });
  await db.close();
  process.env[TEMPLATE_ENV.embeddedDataDir] = dataDir;
}

export async function removeDatabaseTemplates(): Promise<void> {
  const directory = process.env[TEMPLATE_ENV.directory];
  if (directory) rmSync(directory, { recursive: true, force: true });
  const template = process.env[TEMPLATE_ENV.serverDatabase];
  const serverUrl = adminServerUrl();
  if (template && serverUrl) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
}

type Embedded = NonNullable<Awaited<ReturnType<typeof openDatabase>>['embedded']>;

async function migrate(
  env: Record<string, string>,
  beforeClose?: (dataSource: DataSource, embedded: Embedded) => Promise<void>,
) {
  const config = loadConfig({ NODE_ENV: 'test', ...env });
  const { dataSource, embedded } = await openDatabase(config);
  try {
    await dataSource.initialize();
    await runMigrationsLocked(dataSource, config);
    if (embedded) await beforeClose?.(dataSource, embedded);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
