// `npm run build && node bench/tracing-cost.mjs`: what tracing costs, on the embedded
// database. The built server with OTEL_EXPORTER_OTLP_ENDPOINT unset, and set (spans sent
// to a receiver in this process that accepts and drops them): start-up time to a healthy
// /health (median of BENCH_STARTS), and CPU per request on an unknown path and on
// GET /auth/regions/me, in interleaved rounds (medians of the per-round ratios).
//
//   BENCH_ROUNDS=5 BENCH_SECONDS=2 BENCH_CONNECTIONS=32 BENCH_STARTS=5
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pickLoadGenerator } from './load/index.mjs';
import { cpuSeconds } from './lib/processes.mjs';
import { cpuRatio, median } from './lib/report.mjs';
import { startServed } from './lib/service.mjs';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const STARTS = Number(env.BENCH_STARTS ?? 5);
const KEY = 'bench-tracing-initial-key-0123456789abcdef';

const root = fileURLToPath(new URL('..', import.meta.url));
const load = pickLoadGenerator();

const receiver = createServer((req, res) =>
  req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}')),
);
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${receiver.address().port}`;

const dataDir = mkdtempSync(join(tmpdir(), 'bench-tracing-'));
const base = {
  NODE_ENV: 'production',
  JWT_SECRET: 'b'.repeat(32),
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  REDIS_URL: '',
  LOG_LEVEL: 'warn',
  METRICS_PORT: '0',
  INITIAL_REGION_API_KEY: KEY,
  SEED_SAMPLE_DATA: 'false',
};
const variants = {
  off: base,
  on: { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
};
const start = (variant) => startServed(root, { env: variants[variant] });

async function drive(target, path, headers) {
  const before = cpuSeconds(target.child.pid);
  const result = await load.run({ url: target.url + path, seconds: SECONDS, connections: CONNECTIONS, headers });
  return { ...result, cpuUs: ((cpuSeconds(target.child.pid) - before) * 1e6) / result.requests };
}

try {
  await (await start('off')).stop(); // creates the database
  const startup = { off: [], on: [] };
  for (let i = 0; i < STARTS; i++) {
    for (const variant of i % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
      const proc = await start(variant);
      startup[variant].push(proc.startupMs);
      await proc.stop();
    }
  }
  console.log(
    `Start-up to healthy (median of ${STARTS}): tracing off ${Math.round(median(startup.off))} ms, on ${Math.round(median(startup.on))} ms`,
  );

  // The embedded database is one process's: the two servers take turns.
  for (const [name, path, headers] of [
    ['unknown path', '/no/such/route', {}],
    ['GET /auth/regions/me', '/auth/regions/me', { 'x-api-key': KEY }],
  ]) {
    const rounds = { off: [], on: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of round % 2 === 0 ? ['off', 'on'] : ['on', 'off']) {
        const proc = await start(variant);
        await drive(proc, path, headers); // warm-up
        rounds[variant].push(await drive(proc, path, headers));
        await proc.stop();
      }
    }
    const us = (v) => Math.round(median(rounds[v].map((r) => r.cpuUs)));
    console.log(
      `${name}: CPU per request off ${us('off')} µs, on ${us('on')} µs; tracing adds ${Math.round((1 / cpuRatio(rounds.on, rounds.off) - 1) * 100)}% (median of ${ROUNDS} interleaved rounds)`,
    );
  }
} finally {
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
}
