// What a request costs each server in instructions: the service, the ceiling (bare Nest on
// Fastify with Passport + pg, bench/ceiling-server.mjs) and the hand-written reference (bare
// Fastify + pg, bench/reference-server.mjs), counted by valgrind's callgrind on one path, on
// one database, as `npm run bench` compares them by time. Unlike CPU time, an instruction count
// does not change with what else a shared machine is doing. The whole process is counted
// between two points (its JavaScript, the pg driver's work on the database's answers, V8's
// compiler and collector threads, timers), not the kernel's share (socket reads and writes)
// nor PostgreSQL's. Each server runs BENCH_WARM_REQUESTS requests of each kind `npm run bench`
// sends (BENCH_WARM=1) or of the path only, then BENCH_WINDOWS windows of BENCH_REQUESTS.
// Under callgrind a server runs some hundred times slower: about fifteen minutes on the region
// path. So the counts are of processes early in their lives, when the Nest servers promote far
// more of each request to V8's old generation than they do later (bench/RESULTS.md): compare
// them with `npm run bench`'s CPU per request, not in place of it. BENCH_DUMPS=<folder> keeps the dumps, with Node's /tmp/perf-<pid>.map naming the JIT
// code's addresses in them.
//
//   node bench/instructions-servers.mjs                          (GET /auth/regions/me, 5 keys)
//   BENCH_PATH=/no/such/route node bench/instructions-servers.mjs
//
// DATABASE_URL: the server to make the run's database on (this machine's by default).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { callgrind, countWindows, jitNames, windowsLine } from './lib/callgrind.mjs';
import { freePort } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { fillRegion, withClient } from './lib/seed.mjs';
import { startServed } from './lib/service.mjs';
import { settingPairRun } from './lib/setting-pair.mjs';

const root = new URL('..', import.meta.url).pathname;
const env = process.env;
const warmRequests = Number(env.BENCH_WARM_REQUESTS ?? 2000);
const requests = Number(env.BENCH_REQUESTS ?? 500);
const windows = Number(env.BENCH_WINDOWS ?? 3);
const warm = env.BENCH_WARM === '1';
const run = settingPairRun('instructions_servers', [], { ...env, BENCH_PATH: env.BENCH_PATH ?? '/auth/regions/me' });
const { path, serverUrl, dbName, base } = run;
const dumps = env.BENCH_DUMPS ?? mkdtempSync(join(tmpdir(), 'instructions-servers-'));

const started = [];
await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
try {
  // The database made (migrations, the first key) and the region of scenario 1 filled, by a
  // service that is not measured: five keys, the last one made presented.
  const seeder = await startServed(root, { env: { ...base, METRICS_PORT: '0' } });
  let key;
  try {
    key = (await fillRegion(seeder.url, base.INITIAL_REGION_API_KEY, 5)).last.key;
  } finally {
    await seeder.stop();
  }
  const headers = path === '/auth/regions/me' ? { 'x-api-key': key } : {};
  const warmUp = warm
    ? run.warmUp.map(([p, h]) => [p, h['x-api-key'] === base.INITIAL_REGION_API_KEY ? headers : h])
    : [];
  const start = async (name, script, extra) => {
    const server = await startServed(root, {
      script,
      env: { ...base, ...extra },
      wrapper: callgrind(dumps, []),
      nodeArgs: jitNames(dumps, env.BENCH_DUMPS),
      timeoutMs: 600_000,
    });
    started.push(server);
    return [name, server];
  };
  // As `npm run bench` starts them: the service with metrics on, the others with a pool of 10.
  const servers = await Promise.all([
    start('service', 'dist/src/main.js', { METRICS_PORT: String(await freePort()) }),
    start('ceiling', 'bench/ceiling-server.mjs', { DATABASE_POOL_SIZE: '10' }),
    start('reference', 'bench/reference-server.mjs', { DATABASE_POOL_SIZE: '10' }),
  ]);
  // The counts do not depend on timing, so all are driven at once.
  const results = Object.fromEntries(
    await Promise.all(
      servers.map(async ([name, server]) => [
        name,
        await countWindows(server, {
          dumps,
          path,
          headers,
          warmUp: [...warmUp, [path, headers]],
          warmRequests,
          windows,
          requests,
        }),
      ]),
    ),
  );
  console.log(
    `${path}, ${warm ? 'warm' : 'fresh'} servers, after ${warmRequests} requests; ${windows} windows × ${requests} requests; whole processes`,
  );
  const medians = {};
  for (const [name, r] of Object.entries(results)) {
    medians[name] = median(r.perRequest);
    console.log(
      `  ${name.padEnd(9)} ${(medians[name] / 1000).toFixed(1)} k instructions per request (median; windows: ${windowsLine(r)}; statuses ${JSON.stringify(r.statuses)})`,
    );
  }
  const ratio = (a, b) => (medians[b] / medians[a]).toFixed(3);
  console.log(
    `  as a speed ratio (the other's instructions / its own): service / reference ${ratio('service', 'reference')}, ` +
      `service / ceiling ${ratio('service', 'ceiling')}, ceiling / reference ${ratio('ceiling', 'reference')}`,
  );
} finally {
  await Promise.all(started.map((s) => s.stop()));
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
  if (!env.BENCH_DUMPS) rmSync(dumps, { recursive: true, force: true });
}
