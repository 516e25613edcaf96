// What a setting costs a long-running service: CPU per request on one path for two services
// started as configured and two started with the setting (single services of one build
// differ by more than a setting's cost on this machine), all first driven through the
// other kinds of request (the region path, a planets page, a 401, readiness, a refused
// Basic sign-in) for a few seconds each, as a service in production has been. Then rounds
// on the path, interleaved, who goes first alternating; CPU read per thread from
// /proc/<pid>/task, so the main thread and V8's workers (parallel GC) are told apart. With
// BENCH_WARM=0 the services are measured fresh, as bench/run.mjs and profile-pair.mjs measure.
//
//   node bench/warm-pair.mjs METRICS_PORT=0                  (unknown path)
//   node bench/warm-pair.mjs LOG_LEVEL=info
//   BENCH_PATH=/auth/regions/me BENCH_ROUNDS=7 BENCH_SECONDS=3 node bench/warm-pair.mjs METRICS_PORT=0
//
// DATABASE_URL: the server to make the run's database on (this machine's by default).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

import { freePort } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { withClient } from './lib/seed.mjs';
import { makeDatabase, startServed } from './lib/service.mjs';
import { settingPairRun } from './lib/setting-pair.mjs';

const root = new URL('..', import.meta.url).pathname;
const env = process.env;
const rounds = Number(env.BENCH_ROUNDS ?? 7);
const seconds = Number(env.BENCH_SECONDS ?? 3);
const warm = env.BENCH_WARM !== '0';
const { settings, label, path, pathHeaders, serverUrl, dbName, base, warmUp } = settingPairRun('warm_pair');

const wrk = (url, headers, s) =>
  execFileSync('wrk', [
    '-t1',
    '-c32',
    `-d${s}s`,
    ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    url,
  ]).toString();

/** CPU seconds so far of each thread of `pid`, by thread kind (the main thread, V8Worker, ...). */
function threadCpu(pid) {
  const byKind = {};
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const kind = task === String(pid) ? 'main thread' : /\((.*)\)/.exec(stat)[1];
    byKind[kind] = (byKind[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return byKind;
}

await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
try {
  const start = async (overrides) =>
    startServed(root, { env: { ...base, METRICS_PORT: String(await freePort()), ...overrides } });
  await makeDatabase(root, { ...base, METRICS_PORT: String(await freePort()) });
  const services = {
    'as configured': [await start({}), await start({})],
    'with the setting': [await start(settings), await start(settings)],
  };
  const all = Object.values(services).flat();
  for (const service of all) {
    if (warm) for (const [p, headers] of warmUp) wrk(service.url + p, headers, 4);
    wrk(service.url + path, pathHeaders, 3);
  }
  // Per round and side: the mean of its two services' CPU per request, by thread kind too.
  const cpu = { 'as configured': [], 'with the setting': [] };
  const threads = { 'as configured': {}, 'with the setting': {} };
  const measureOne = (service) => {
    const pid = service.child.pid;
    const before = threadCpu(pid);
    const requests = Number(/(\d+) requests in/.exec(wrk(service.url + path, pathHeaders, seconds))[1]);
    const after = threadCpu(pid);
    return Object.fromEntries(
      Object.keys(after).map((kind) => [kind, ((after[kind] - (before[kind] ?? 0)) * 1e6) / requests]),
    );
  };
  for (let round = 0; round < rounds; round++) {
    // Who goes first alternates: A B A' B', then B A B' A'.
    const [a, b] = Object.keys(services);
    const order = round % 2 ? [b, a, b, a] : [a, b, a, b];
    const seen = { [a]: 0, [b]: 0 };
    const byName = { [a]: [], [b]: [] };
    for (const name of order) byName[name].push(measureOne(services[name][seen[name]++]));
    for (const name of [a, b]) {
      const kinds = new Set(byName[name].flatMap(Object.keys));
      let total = 0;
      for (const kind of kinds) {
        const us = byName[name].reduce((sum, m) => sum + (m[kind] ?? 0), 0) / byName[name].length;
        total += us;
        (threads[name][kind] ??= []).push(us);
      }
      cpu[name].push(total);
    }
  }
  await Promise.all(all.map((s) => s.stop()));

  console.log(
    `${path}, ${warm ? 'warm' : 'fresh'} services, two a side, ${rounds} rounds × ${seconds} s; setting: ${label}`,
  );
  for (const name of Object.keys(cpu)) {
    const kinds = Object.entries(threads[name])
      .map(([kind, values]) => [kind, median(values)])
      .filter(([, us]) => us >= 0.05)
      .map(([kind, us]) => `${kind} ${us.toFixed(2)}`);
    console.log(
      `  ${name.padEnd(17)} ${median(cpu[name]).toFixed(2)} µs of CPU per request (median; ${kinds.join(', ')})`,
    );
  }
  const ratios = cpu['with the setting'].map((us, i) => us / cpu['as configured'][i]);
  console.log(`  with the setting / as configured: ${median(ratios).toFixed(3)} (median of the per-round ratios)`);
} finally {
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}
