// What a setting costs in instructions: the instructions a request runs on one path, counted
// by valgrind's callgrind, for two services started as configured and two with the setting,
// all on a database that a fifth service made first (measured too, as configured). Unlike
// CPU time, an instruction count does not change with what else a shared machine is doing,
// so it resolves a cost of a few per cent where timings here cannot. Only what runs inside
// Node's HTTP parser callback is counted (node::http_parser::Parser::OnStreamRead: the
// request's JavaScript, its response and its ticks and microtasks), not timers or V8's
// background threads; nor the kernel's share (socket reads and writes), so it complements
// `npm run bench`, it does not replace it.
//
// Each service answers BENCH_WARM_REQUESTS requests on the path first (V8 compiles the hot code
// meanwhile), and with BENCH_WARM=1 as many of each other kind of request before them, as
// warm-pair.mjs does. Then BENCH_WINDOWS windows of BENCH_REQUESTS requests each: the counters
// are zeroed before a window and read after it. Windows that agree show the count has settled.
// Under callgrind a service runs some hundreds of times slower: a run takes about ten minutes.
// With BENCH_DUMPS=<folder> the dumps are kept for callgrind_annotate, with Node's
// /tmp/perf-<pid>.map naming the JIT code's addresses in them.
//
//   node bench/instructions.mjs METRICS_PORT=0                   (unknown path, fresh services)
//   BENCH_WARM=1 node bench/instructions.mjs METRICS_PORT=0
//   BENCH_PATH=/auth/regions/me node bench/instructions.mjs LOG_LEVEL=info
//
// DATABASE_URL: the server to make the run's database on (this machine's by default).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { callgrind, countWindows, jitNames, windowsLine } from './lib/callgrind.mjs';
import { freePort } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { withClient } from './lib/seed.mjs';
import { startServed } from './lib/service.mjs';
import { settingPairRun } from './lib/setting-pair.mjs';

const root = new URL('..', import.meta.url).pathname;
const env = process.env;
const warmRequests = Number(env.BENCH_WARM_REQUESTS ?? 2000);
const requests = Number(env.BENCH_REQUESTS ?? 1000);
const windows = Number(env.BENCH_WINDOWS ?? 2);
const warm = env.BENCH_WARM === '1';
const { settings, label, path, pathHeaders, serverUrl, dbName, base, warmUp } = settingPairRun('instructions');
const dumps = env.BENCH_DUMPS ?? mkdtempSync(join(tmpdir(), 'instructions-'));

const measure = (service) =>
  countWindows(service, {
    dumps,
    path,
    headers: pathHeaders,
    warmUp: [...(warm ? warmUp : []), [path, pathHeaders]],
    warmRequests,
    windows,
    requests,
  });

const started = [];
await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
try {
  const start = async (overrides) => {
    const service = await startServed(root, {
      env: { ...base, METRICS_PORT: String(await freePort()), ...overrides },
      wrapper: callgrind(dumps, ['--collect-atstart=no', '--toggle-collect=node::http_parser::Parser::OnStreamRead*']),
      nodeArgs: jitNames(dumps, env.BENCH_DUMPS),
      timeoutMs: 600_000,
    });
    started.push(service);
    return service;
  };
  // The first makes the database (migrations, the first key) and is measured on its own: it
  // was in the slow state (literalRuntime) in every run so far. Then the four that are
  // compared start together.
  const maker = await start({});
  const rest = await Promise.all([start({}), start({}), start(settings), start(settings)]);
  const services = {
    'made the database': [maker],
    'as configured': rest.slice(0, 2),
    'with the setting': rest.slice(2),
  };
  // The counts do not depend on timing, so all are driven at once.
  const results = {};
  await Promise.all(
    Object.entries(services).map(async ([name, list]) => {
      results[name] = await Promise.all(list.map(measure));
    }),
  );

  console.log(
    `${path}, ${warm ? 'warm' : 'fresh'} services, two a side and the one that made the database, after ${warmRequests} requests; ` +
      `${windows} windows × ${requests} requests; setting: ${label}`,
  );
  const medians = {};
  for (const [name, list] of Object.entries(results)) {
    medians[name] = median(list.flatMap((r) => r.perRequest));
    const each = list.map(windowsLine).join(' | ');
    const statuses = JSON.stringify(list[0].statuses);
    console.log(
      `  ${name.padEnd(17)} ${(medians[name] / 1000).toFixed(1)} k instructions per request (median; windows: ${each}; statuses ${statuses})`,
    );
  }
  console.log(
    `  with the setting / as configured: ${(medians['with the setting'] / medians['as configured']).toFixed(3)}`,
  );
  // The same, among the services of each state only, where both sides have one.
  for (const slow of [false, true]) {
    const side = (name) => results[name].filter((r) => r.slowLiteral === slow).flatMap((r) => r.perRequest);
    const [configured, set] = [side('as configured'), side('with the setting')];
    if (configured.length > 0 && set.length > 0)
      console.log(
        `  the same, services ${slow ? 'in' : 'not in'} the slow state only: ${(median(set) / median(configured)).toFixed(3)} ` +
          `(${((median(set) - median(configured)) / 1000).toFixed(1)} k instructions per request)`,
      );
  }
} finally {
  await Promise.all(started.map((s) => s.stop()));
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
  if (!env.BENCH_DUMPS) rmSync(dumps, { recursive: true, force: true });
}
