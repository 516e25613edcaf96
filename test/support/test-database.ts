import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from 'pg';

/**
 * The database a test suite runs on. With DATABASE_URL set (CI's second pass), each
 * suite gets a database of its own on that PostgreSQL server, dropped afterwards; without
 * it, the embedded PostgreSQL, in memory.
 */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export const usesPostgresServer = (): boolean => Boolean(process.env.DATABASE_URL);

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { env: { DATA_DIR: 'memory://' }, drop: async () => undefined };
  const name = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/**
 * A database that outlives one app, for tests that stop and start apps on the same data:
 * a directory for the embedded database (memory:// would die with its app), or a database
 * of its own on the server.
 */
export async function createPersistentTestDatabase(): Promise<TestDatabase> {
  if (usesPostgresServer()) return createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'rk-persistent-'));
  return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
