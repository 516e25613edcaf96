import { rmSync } from 'node:fs';

import { jest } from '@jest/globals';

import { freePort, startProcess } from '../support/processes';
import { createTestDatabase, migratedDataDir, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * The real server as a process: counts held in memory reach the database on SIGTERM, on the
 * embedded database (DATA_DIR) or on the PostgreSQL server (DATABASE_URL set).
 */
jest.setTimeout(120_000);

const SERVER = 'dist/src/main.js';
const KEY = 'operator-chosen-initial-key-0123456789abcdef';

let dataDir: string;
let db: TestDatabase | undefined;
beforeEach(async () => {
  dataDir = migratedDataDir('rk-usage-');
  db = usesPostgresServer() ? await createTestDatabase() : undefined;
});
afterEach(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await db?.drop();
});

const api = (port: number, path: string) => fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': KEY } });

async function startServer(env: Record<string, string>) {
  const port = await freePort();
  const server = startProcess(SERVER, [], { ...env, PORT: String(port) });
  await server.waitFor(/Server listening/);
  return { server, port };
}

it('writes the counts still in memory when stopped with SIGTERM', async () => {
  const env = {
    ...(db?.env ?? { DATA_DIR: dataDir }),
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    INITIAL_REGION_API_KEY: KEY,
    // Far beyond the test: only the shutdown can write the counts.
    API_KEY_USAGE_FLUSH_INTERVAL_MS: '3600000',
    SHUTDOWN_GRACE_MS: '60000',
  };
  const first = await startServer(env);
  let keyId: string;
  const n = 25;
  try {
    const region = (await (await api(first.port, '/auth/regions/me')).json()) as { apiKeys: { id: string }[] };
    keyId = region.apiKeys[0].id;
    for (let i = 1; i < n; i++) expect((await api(first.port, '/auth/regions/me')).status).toBe(200);
  } finally {
    first.server.child.kill('SIGTERM');
  }
  const exitCode = await first.server.exited;
  expect({ exitCode, log: exitCode === 0 ? '' : first.server.stdout().slice(-3000) + first.server.stderr() }).toEqual({
    exitCode: 0,
    log: '',
  });
  expect(first.server.stdout()).not.toMatch(/could not be written before shutdown/);

  const again = await startServer(env);
  try {
    const res = await api(again.port, `/auth/region/api-keys/${keyId}/usage?days=2`);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { requests: number }[] };
    // The n requests of the first run, and this one (pending in the second server's memory).
    expect(data.reduce((sum, day) => sum + day.requests, 0)).toBe(n + 1);
  } finally {
    again.server.child.kill('SIGTERM');
    await again.server.exited;
  }
});
