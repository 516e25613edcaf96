// CPU profiles of two runs of the built service, side by side, in µs of CPU per request by
// package (self time): the same path driven by wrk under two sets of settings. For questions
// like "what does METRICS_PORT=0 save on the unknown path, and where". Paths that need no
// credentials only (the service starts on an existing database, with no key made for it).
//
//   node bench/profile-pair.mjs /no/such/route METRICS_PORT=0        (default against METRICS_PORT=0)
//   node bench/profile-pair.mjs /auth/regions/me LOG_LEVEL=info -- X-API-Key:rk_malformed
//
// DATABASE_URL defaults to this machine's test database; BENCH_SECONDS (10) per run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from './lib/processes.mjs';
import { perRequestByPlace } from './lib/profile-summary.mjs';
import { productionEnv, startServed } from './lib/service.mjs';

const root = new URL('..', import.meta.url).pathname;
const [path = '/no/such/route', ...rest] = process.argv.slice(2);
const split = rest.indexOf('--');
const settings = Object.fromEntries(
  (split < 0 ? rest : rest.slice(0, split)).map((s) => s.split(/=(.*)/s).slice(0, 2)),
);
const headers = (split < 0 ? [] : rest.slice(split + 1)).flatMap((h) => ['-H', h]);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'profile-pair-'));
const base = productionEnv({
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  jwtSecret: 'profile-pair-'.padEnd(48, 'x'),
});
delete base.INITIAL_REGION_API_KEY;

async function profile(name, overrides) {
  const metricsPort = String(await freePort());
  const service = await startServed(root, {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`],
    env: { ...base, METRICS_PORT: metricsPort, ...overrides },
  });
  const wrk = (s) => execFileSync('wrk', ['-t1', '-c32', `-d${s}s`, ...headers, service.url + path]).toString();
  wrk(3);
  const requests = Number(/(\d+) requests in/.exec(wrk(seconds))[1]);
  await service.stop();
  return { requests, byPlace: perRequestByPlace(join(dir, `${name}.cpuprofile`), requests) };
}

const a = await profile('default', {});
const b = await profile('changed', settings);
const label =
  Object.entries(settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ') || 'the same settings';
console.log(`${path}: ${a.requests} requests as configured, ${b.requests} with ${label}, ${seconds} s each`);
console.log(
  `${'µs of CPU per request (self time)'.padEnd(60)} ${'default'.padStart(8)} ${'changed'.padStart(8)} ${'diff'.padStart(7)}`,
);
const places = [...new Set([...a.byPlace.keys(), ...b.byPlace.keys()])];
const row = (p) => [p, a.byPlace.get(p) ?? 0, b.byPlace.get(p) ?? 0];
const rows = places.map(row).sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]));
const total = rows.reduce((t, [, x, y]) => [t[0] + x, t[1] + y], [0, 0]);
for (const [p, x, y] of [['busy, all places', ...total], ...rows.slice(0, 20)])
  console.log(
    `${p.slice(0, 60).padEnd(60)} ${x.toFixed(2).padStart(8)} ${y.toFixed(2).padStart(8)} ${(x - y).toFixed(2).padStart(7)}`,
  );
