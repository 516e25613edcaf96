import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { adminQuery, adminServerUrl, TEMPLATE_ENV, withDatabase } from './database-templates';

/**
 * The database a test suite runs on. With DATABASE_URL set (CI's server passes), each
 * suite gets a database of its own on that PostgreSQL server, dropped afterwards; without
 * it, the embedded PostgreSQL, in memory. With DATABASE_URL on a connection pooler and
 * TEST_DATABASE_ADMIN_URL on the server behind it, the apps reach the database through the
 * pooler and the database is created and dropped on the server (see adminServerUrl).
 */
export interface TestDatabase {
  env: Record<string, string>;
  /**
   * The database on the server itself, never through a pooler (on a server only): for the
   * test's own sessions, such as one that holds a lock, or watches or ends the service's
   * sessions in pg_stat_activity, which a transaction pooler would move between server
   * connections.
   */
  directUrl?: string;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * Start with nothing in it, not even the migrations (for tests of migrating itself). By
   * default a test database is a copy of one the e2e global setup migrated, when there is
   * one (database-templates.ts); the app's start then finds nothing to apply.
   */
  empty?: boolean;
}

export const usesPostgresServer = (): boolean => Boolean(process.env.DATABASE_URL);

/** The apps reach the server through a connection pooler (TEST_DATABASE_ADMIN_URL names the server behind it). */
export const usesPooler = (): boolean =>
  usesPostgresServer() && adminServerUrl() !== undefined && adminServerUrl() !== process.env.DATABASE_URL;

export async function createTestDatabase({ empty = false }: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const image = empty ? undefined : process.env[TEMPLATE_ENV.embeddedImage];
    return { env: { DATA_DIR: `memory://${image ?? ''}` }, drop: async () => undefined };
  }
  const adminUrl = adminServerUrl() ?? serverUrl;
  const name = `test_${randomBytes(6).toString('hex')}`;
  const template = empty ? undefined : process.env[TEMPLATE_ENV.serverDatabase];
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  return {
    env: { DATABASE_URL: withDatabase(serverUrl, name) },
    directUrl: withDatabase(adminUrl, name),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * A database that outlives one app, for tests that stop and start apps on the same data:
 * a directory for the embedded database (memory:// would die with its app), or a database
 * of its own on the server.
 */
export async function createPersistentTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (usesPostgresServer()) return createTestDatabase(options);
  const dir = options.empty ? mkdtempSync(join(tmpdir(), 'rk-persistent-')) : migratedDataDir('rk-persistent-');
  return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A new directory, under the system's temporary one, holding a migrated embedded database
 * (empty when the e2e global setup made no template): a DATA_DIR for a server or CLI process
 * a test starts. The caller removes it.
 */
export function migratedDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const template = process.env[TEMPLATE_ENV.embeddedDataDir];
  if (template) cpSync(template, dir, { recursive: true });
  return dir;
}
