// HTTP benchmark: starts the compiled server (npm run build first; `npm run bench` does)
// on a fresh embedded database, or on DATABASE_URL when set, and prints throughput and
// latency of the main routes. Figures, not pass/fail: compare runs on one machine.
//
//   npm run bench                       # embedded database
//   DATABASE_URL=postgres://… npm run bench
//   BENCH_SECONDS=10 BENCH_CONCURRENCY=32 npm run bench
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

const port = await new Promise((done) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => done(port));
  });
});
const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
// On a PostgreSQL server, a database of its own (dropped at the end), so that the first
// start creates the region with this run's key.
const serverUrl = process.env.DATABASE_URL;
const benchDb = `bench_${randomBytes(4).toString('hex')}`;
const admin = async (sql) => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(sql);
  await client.end();
};
let databaseUrl = '';
if (serverUrl) {
  await admin(`CREATE DATABASE "${benchDb}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${benchDb}`;
  databaseUrl = url.toString();
}
const key = `bench-${randomBytes(24).toString('hex')}`;
const server = spawn(process.execPath, ['dist/src/main.js'], {
  env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', INITIAL_REGION_API_KEY: key, NODE_ENV: 'production', JWT_SECRET: randomBytes(32).toString('hex') },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;

for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break;
  } catch {}
  if (i > 300) throw new Error('server did not start');
  await new Promise((r) => setTimeout(r, 100));
}

async function measure(name, makeRequest) {
  const latencies = [];
  let errors = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await makeRequest();
        await res.arrayBuffer();
        if (!res.ok) errors++;
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  console.log(
    `${name.padEnd(44)} ${String(Math.round(latencies.length / SECONDS)).padStart(7)} req/s   p50 ${pct(50)} ms   p99 ${pct(99)} ms   non-2xx ${errors}`,
  );
}

const headers = { 'x-api-key': key };
console.log(`database: ${process.env.DATABASE_URL ? 'PostgreSQL server' : 'embedded (PGlite)'}; ${CONCURRENCY} concurrent clients, ${SECONDS} s per route`);
await measure('GET /health', () => fetch(`${base}/health`));
await measure('GET /auth/regions/me (X-API-Key)', () => fetch(`${base}/auth/regions/me`, { headers }));
await measure('GET /auth/regions/me (malformed key, 401)', () => fetch(`${base}/auth/regions/me`, { headers: { 'x-api-key': 'rk_nope' } }));
await measure('POST + DELETE /auth/region/api-keys', async () => {
  const created = await fetch(`${base}/auth/region/api-keys`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"description":"bench"}',
  });
  const { id } = await created.json();
  return fetch(`${base}/auth/region/api-keys/${id}`, { method: 'DELETE', headers });
});

server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });
if (serverUrl) await admin(`DROP DATABASE IF EXISTS "${benchDb}" WITH (FORCE)`);
