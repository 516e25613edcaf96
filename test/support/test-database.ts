import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { adminQuery, TEMPLATE_ENV, withDatabase } from './database-templates';

/**
 * The database a test suite runs on. With DATABASE_URL set (CI's second pass), each
 * suite gets a database of its own on that PostgreSQL server, dropped afterwards; without
 * it, the embedded PostgreSQL, in memory.
 */
export interface TestDatabase {
  env: Record<string, string>;
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

export async function createTestDatabase({ empty = false }: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const image = empty ? undefined : process.env[TEMPLATE_ENV.embeddedImage];
    return { env: { DATA_DIR: `memory://${image ?? ''}` }, drop: async () => undefined };
  }
  const name = `test_${randomBytes(6).toString('hex')}`;
  const template = empty ? undefined : process.env[TEMPLATE_ENV.serverDatabase];
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  return {
    env: { DATABASE_URL: withDatabase(serverUrl, name) },
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
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
