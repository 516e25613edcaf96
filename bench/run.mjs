// `npm run bench`: the built service (production mode), scenario by scenario, against two
// servers each: the hand-written reference (bench/reference-server.mjs: bare Fastify + pg)
// and the ceiling (bench/ceiling-server.mjs: bare Nest on Fastify with Passport + pg, the
// same SQL), or for the problem answers (7a, 7b) a bare Fastify problem server
// (bench/problem-server.mjs) and the ceiling; rounds interleave the three. A bare hello
// shows that the load generator is not the limit. On the PostgreSQL and Redis of this
// machine, with the load coming from other processes (bench/load). Prints a table and
// writes it into bench/RESULTS.md under `## <BENCH_LABEL>`.
//
//   npm run bench
//   BENCH_LABEL=Label npm run bench           section of RESULTS.md to (re)write (default: Latest run)
//   BENCH_SCENARIOS=1,3,5 npm run bench       some scenarios only (no RESULTS.md then)
//   BENCH_PROFILE=1 npm run bench             CPU profile of the service under scenarios 1, 3, 5 (or BENCH_SCENARIOS)
//   BENCH_ROUNDS=5 BENCH_SECONDS=2 BENCH_CONNECTIONS=32 BENCH_LOAD=wrk|autocannon
//   BENCH_SETTLE_SECONDS=10                   the first scenario once more for every server before any round
//   node bench/compare-builds.mjs ../other-checkout   this build against another one (see that file)
//   DATABASE_URL=postgres://…  REDIS_URL=redis://…   (defaults: this machine's)
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { pickLoadGenerator } from './load/index.mjs';
import { freePort, rssMb } from './lib/processes.mjs';
import {
  check,
  cpuRatio,
  fmt,
  keyValueTable,
  median,
  roundRatio,
  scenarioTable,
  summarise,
  targetTable,
  writeSection,
} from './lib/report.mjs';
import { fillRegion, revokeFlowLeftovers, seedOtherKeys, seedPlanets, signUp, withClient } from './lib/seed.mjs';
import { makeDatabase, measure, productionEnv, startServed } from './lib/service.mjs';
import { summariseProfile } from './lib/profile-summary.mjs';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const WARMUP_SECONDS = 1;
const SETTLE_SECONDS = Number(env.BENCH_SETTLE_SECONDS ?? 10);
const PROFILE = Boolean(env.BENCH_PROFILE);
const SELECTED = env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()) ?? (PROFILE ? ['1', '3', '5'] : null);
const LABEL = env.BENCH_LABEL ?? 'Latest run';
const PLANETS = 10_000;
const OTHER_KEYS = 100_000;
const INTRO = `
# Benchmark results

Written by \`npm run bench\` (bench/run.mjs says what each scenario does). The service runs
built, in production mode, started as \`npm start\` starts it, on this machine's PostgreSQL
and Redis. Each scenario compares it with two servers, under the same Node settings: the
reference (bench/reference-server.mjs, bare Fastify + pg) and the ceiling
(bench/ceiling-server.mjs, bare Nest on Fastify with Passport strategies + pg: the cost of
the required stack itself), both with the same SQL and the same JSON; the problem answers
(7a, 7b) with a bare Fastify problem server (bench/problem-server.mjs) and the ceiling. The
load comes from other processes (wrk where installed, else autocannon); a bare Fastify hello
shows how far it goes. Figures are medians of the rounds; a round runs the service and both
others back to back, in an order that changes from round to round. A ratio is the median of
the per-round ratios of the service to what it is compared with: by throughput, as the
targets are set, and by CPU time per request of the server process (the other's over the
service's), which other work on a shared machine disturbs far less. Absolute figures move
between runs on a shared machine: compare the ratios of one run.
`;

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsFile = join(root, 'bench/RESULTS.md');

const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
const load = pickLoadGenerator();
const log = (line) => console.log(line);

const serviceEnv = (overrides = {}) => ({ ...productionEnv({ databaseUrl, jwtSecret, initialKey }), ...overrides });
const jwtSecret = randomBytes(32).toString('hex');
const initialKey = generateApiKey();
// The service starts as `npm start` starts it: `npm run serve`, `node <V8 settings> dist/src/main.js`.
// Metrics on, as in production, each service on a port of its own (the default one would clash).
const startService = async (overrides = {}, nodeArgs = []) =>
  startServed(root, { nodeArgs, env: serviceEnv({ METRICS_PORT: String(await freePort()), ...overrides }) });

const started = [];
const tempDirs = [];
async function cleanup() {
  await Promise.allSettled(started.map((p) => p.stop()));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)).catch(() => {});
}
const keep = (proc) => (started.push(proc), proc);

/**
 * Drives a server with a scenario's requests for `seconds`; adds the server's CPU time per
 * request (cpuUs), which other work on a shared machine disturbs far less than req/s.
 */
function drive(target, scenario, seconds) {
  return measure(load, target, {
    url: target.url + scenario.path,
    seconds,
    connections: CONNECTIONS,
    headers: scenario.headers?.() ?? {},
    flow: scenario.flow,
  });
}

try {
  const benchStart = performance.now();
  await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
  const firstStartMs = await makeDatabase(root, serviceEnv({ METRICS_PORT: String(await freePort()) }));
  const service = keep(await startService());

  // Data: a region with 5 keys, a user with a token, 10,000 planets with 2 satellites each.
  const { regionId, last } = await fillRegion(service.url, initialKey, 5);
  const mainKey = last.key;
  const user = await signUp(service.url, 'bench@example.com', 'bench password 1', 'Bench');
  await seedPlanets(databaseUrl, user.id, PLANETS);
  const referenceEnv = { ...serviceEnv(), DATABASE_POOL_SIZE: '10' };

  const scenarios = [
    {
      id: '1',
      name: 'GET /auth/regions/me (region with 5 keys)',
      path: '/auth/regions/me',
      headers: () => ({ 'x-api-key': mainKey }),
    },
    {
      id: '2',
      name: `same, ${OTHER_KEYS.toLocaleString('en-US')} keys in the table`,
      path: '/auth/regions/me',
      headers: () => ({ 'x-api-key': mainKey }),
      before: () => seedOtherKeys(databaseUrl, OTHER_KEYS),
    },
    { id: '3', name: 'GET /me, Bearer', path: '/me', headers: () => ({ authorization: `Bearer ${user.token}` }) },
    { id: '4', name: 'GET /me, Basic (warm)', path: '/me', headers: () => ({ authorization: user.basic }) },
    {
      id: '5',
      name: `GET /planets?limit=100 (${PLANETS.toLocaleString('en-US')} planets, 2 satellites each)`,
      path: '/planets?limit=100',
    },
    {
      id: '5z',
      name: 'same, Accept-Encoding: gzip',
      path: '/planets?limit=100',
      headers: () => ({ 'accept-encoding': 'gzip' }),
    },
    {
      id: '6',
      name: 'POST then DELETE /auth/region/api-keys',
      path: '/auth/region/api-keys',
      flow: 'create-delete',
      headers: () => ({ 'x-api-key': mainKey }),
      after: () => revokeFlowLeftovers(databaseUrl, regionId),
    },
    {
      id: '7a',
      name: '404 problem: unknown path',
      path: '/no/such/route',
      against: ['problem', 'ceiling'],
      status: 404,
    },
    {
      id: '7b',
      name: '401 problem: malformed key',
      path: '/auth/regions/me',
      headers: () => ({ 'x-api-key': 'rk_malformed' }),
      against: ['problem', 'ceiling'],
      status: 401,
    },
  ]
    .map((s) => ({ against: ['reference', 'ceiling'], status: 200, ...s }))
    .filter((s) => !SELECTED || SELECTED.includes(s.id) || SELECTED.includes(s.id[0]));
  const hello = { path: '/' };

  if (PROFILE) {
    await profileScenarios(scenarios);
  } else {
    // Under the service's V8 memory settings too: the comparison is of the code, not of heap sizes.
    const servers = {
      reference: keep(await startServed(root, { script: 'bench/reference-server.mjs', env: referenceEnv })),
      ceiling: keep(await startServed(root, { script: 'bench/ceiling-server.mjs', env: referenceEnv })),
      problem: keep(await startServed(root, { script: 'bench/problem-server.mjs', env: referenceEnv })),
    };
    const helloServer = keep(await startServed(root, { script: 'bench/hello-server.mjs', readyPath: '/' }));
    log(
      `Load: ${load.name}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per scenario and server; Node ${process.version}; ${cpus()[0].model} x${cpus().length}`,
    );
    const generatorCheck = await drive(helloServer, hello, SECONDS);
    log(`Load generator check: bare hello at ${fmt.int(generatorCheck.rps)} req/s`);

    // One pass over every route first, so that no scenario pays for compiling the code paths
    // it shares with later ones (V8's compiler threads count in the process's CPU time).
    const targetsOf = (scenario) => [service, ...scenario.against.map((name) => servers[name])];
    await warmUp(scenarios, targetsOf);
    // Then every server of the first scenario serves it SETTLE_SECONDS more. A Nest server
    // promotes several times more of each request to V8's old generation in its first tens
    // of thousands of requests than later, so without this the scenario measured first would
    // measure that early life rather than the code. The same for every server; a service in
    // production spends nearly all its life past that point.
    const first = scenarios.find((scenario) => !scenario.before);
    for (const target of first ? targetsOf(first) : []) {
      await drive(target, first, SETTLE_SECONDS);
      await first.after?.();
    }

    const rows = [];
    for (const scenario of scenarios) {
      await scenario.before?.();
      const sides = [
        { name: 'service', server: service, rounds: [] },
        ...scenario.against.map((name) => ({ name, server: servers[name], rounds: [] })),
      ];
      if (scenario.flow) await expectSameWrites(scenario, sides);
      else await expectSameAnswer(scenario, sides);
      const run = async (target, seconds) => {
        const result = await drive(target, scenario, seconds);
        await scenario.after?.();
        return result;
      };
      for (const side of sides) await run(side.server, WARMUP_SECONDS);
      for (let round = 0; round < ROUNDS; round++) {
        // Each round starts with another of the three, so none always follows the same one's load.
        const order = sides.map((_, i) => sides[(i + round) % sides.length]);
        for (const side of order) side.rounds.push(await run(side.server, SECONDS));
      }
      const [serviceSide, ...others] = sides;
      const row = {
        scenario,
        service: serviceSide.rounds,
        others: others.map(({ name, rounds }) => ({
          name,
          rounds,
          ratio: roundRatio(serviceSide.rounds, rounds),
          cpu: cpuRatio(serviceSide.rounds, rounds),
        })),
      };
      rows.push(row);
      const s = summarise(serviceSide.rounds);
      const ratios = row.others.map((o) => `${o.name} ${fmt.ratio(o.ratio)} (CPU ${fmt.ratio(o.cpu)})`).join(', ');
      log(
        `  ${scenario.id.padEnd(3)} ${scenario.name.padEnd(58)} ${fmt.int(s.rps).padStart(7)} req/s  p99 ${fmt.ms(s.p99).padStart(6)} ms  ${fmt.int(s.cpuUs).padStart(5)} µs CPU/req  against ${ratios}`,
      );
    }

    // Leak check: the resident memory after the run, and after the same load once more.
    const rssAfterRun = rssMb(service.child.pid);
    for (const scenario of scenarios) {
      await drive(service, scenario, SECONDS);
      await scenario.after?.();
    }
    const rssAfterRepeat = rssMb(service.child.pid);

    const basicBurst = await firstBasicRequests(service.url);
    const logging = await loggingCost(scenarios);
    const metrics = await metricsCost(scenarios);
    // The service has run everything the bench asks of it, metrics on, as in production.
    // It idles while the pairs above are compared, and V8 gives memory back when idle: the
    // target is checked against the highest of the three readings, not the last.
    const rssAtEnd = rssMb(service.child.pid);
    const rssHighest = Math.max(rssAfterRun, rssAfterRepeat, rssAtEnd);
    const startup = await startupTimes();
    const fastestService = Math.max(...rows.map((r) => summarise(r.service).rps));

    const byId = (id) => rows.find((r) => r.scenario.id === id);
    const serviceRps = (id) => (byId(id) ? summarise(byId(id).service).rps : NaN);
    const against = (id, name) => byId(id)?.others.find((o) => o.name === name);
    const ratioOf = (id, name) => against(id, name)?.ratio ?? NaN;
    const cpuOf = (id, name) => fmt.ratio(against(id, name)?.cpu);
    const vs = (id, name, atLeast) => ({ atLeast, note: cpuOf(id, name) });
    // Service CPU per request of scenario a over that of b: b's cost relative to a's.
    const serviceCpu = (a, b) =>
      byId(a) && byId(b) ? fmt.ratio(summarise(byId(a).service).cpuUs / summarise(byId(b).service).cpuUs) : '–';
    const rssGrowth = rssAfterRepeat - rssAfterRun;
    const checks = [
      check('1: region, service / ceiling', ratioOf('1', 'ceiling'), vs('1', 'ceiling', 0.9)),
      check('1: region, service / reference', ratioOf('1', 'reference'), vs('1', 'reference', 0.8)),
      check('2: region among 100,000 keys, service / reference', ratioOf('2', 'reference'), vs('2', 'reference', 0.8)),
      check('2 against 1 (service req/s)', serviceRps('2') / serviceRps('1'), {
        atLeast: 0.9,
        note: serviceCpu('1', '2'),
      }),
      check('3: /me Bearer, service / ceiling', ratioOf('3', 'ceiling'), vs('3', 'ceiling', 0.9)),
      check('3: /me Bearer, service / reference', ratioOf('3', 'reference'), vs('3', 'reference', 0.8)),
      check('4 against 3: Basic (warm) / Bearer, service', serviceRps('4') / serviceRps('3'), {
        atLeast: 0.7,
        note: serviceCpu('3', '4'),
      }),
      check('32 first Basic requests at once: slowest / one alone', basicBurst.slowest / basicBurst.alone, {
        atMost: 2,
      }),
      check('5: planets page, service / reference', ratioOf('5', 'reference'), vs('5', 'reference', 0.6)),
      check(
        '5z: the same gzip-compressed (all), service / reference',
        ratioOf('5z', 'reference'),
        vs('5z', 'reference', 0.6),
      ),
      check('6: POST + DELETE, service / reference', ratioOf('6', 'reference'), vs('6', 'reference', 0.7)),
      check(
        '6: POST + DELETE, failed requests',
        byId('6') ? summarise(byId('6').service).non2xx + summarise(byId('6').service).errors : NaN,
        { atMost: 0, digits: 0 },
      ),
      check('7a: 404 problem, service / bare problem server', ratioOf('7a', 'problem'), vs('7a', 'problem', 0.7)),
      check('7b: 401 problem, service / bare problem server', ratioOf('7b', 'problem'), vs('7b', 'problem', 0.7)),
      // The cost of logging is CPU; throughput, far noisier here, goes in the table above.
      check('LOG_LEVEL=info against warn, 1: region: CPU per request added', logging.region.cpu, {
        atMost: 0.15,
        note: fmt.ratio(logging.region.cpu),
      }),
      check('LOG_LEVEL=info against warn, unknown path: CPU per request added', logging.cheap.cpu, {
        atMost: 0.15,
        note: fmt.ratio(logging.cheap.cpu),
      }),
      check('Metrics on against METRICS_PORT=0, unknown path: CPU per request added', metrics.cheap.cpu, {
        atMost: 0.05,
        note: fmt.ratio(metrics.cheap.cpu),
      }),
      check('Resident memory, highest after the scenarios, a repeat and the whole bench (metrics on)', rssHighest, {
        atMost: 250,
        unit: ' MB',
        digits: 0,
      }),
      check('Resident memory growth on a repeat', rssGrowth, {
        atMost: Math.max(10, rssAfterRun * 0.05),
        unit: ' MB',
        digits: 0,
      }),
      check('Start-up to healthy, PostgreSQL', startup.postgres, { atMost: 1500, unit: ' ms', digits: 0 }),
      check('Start-up to healthy, existing embedded database', startup.embedded, {
        atMost: 2000,
        unit: ' ms',
        digits: 0,
      }),
    ];
    const other = keyValueTable([
      [
        'Load generator check: bare hello',
        `${fmt.int(generatorCheck.rps)} req/s, ${(generatorCheck.rps / fastestService).toFixed(1)}× the service's fastest scenario (${fmt.int(fastestService)} req/s)`,
      ],
      [
        '32 first Basic requests of one user at once',
        `slowest ${fmt.int(basicBurst.slowest)} ms; one first request alone ${fmt.int(basicBurst.alone)} ms; all 200: ${basicBurst.allOk}`,
      ],
      [
        'LOG_LEVEL=info against warn',
        `unknown path: ${pct(logging.cheap.rps)} fewer req/s, ${pct(logging.cheap.cpu)} more CPU per request; ` +
          `GET /auth/regions/me: ${pct(logging.region.rps)} fewer req/s, ${pct(logging.region.cpu)} more CPU per request`,
      ],
      [
        'Metrics on against METRICS_PORT=0',
        `unknown path: ${pct(metrics.cheap.rps)} fewer req/s, ${pct(metrics.cheap.cpu)} more CPU per request; ` +
          `GET /auth/regions/me: ${pct(metrics.region.rps)} fewer req/s, ${pct(metrics.region.cpu)} more CPU per request`,
      ],
      [
        'Resident memory of the service',
        `${fmt.int(rssAfterRun)} MB after the scenarios, ${fmt.int(rssAfterRepeat)} MB after a repeat (${rssGrowth >= 0 ? '+' : ''}${rssGrowth.toFixed(1)} MB), ` +
          `${fmt.int(rssAtEnd)} MB after the whole bench`,
      ],
      [
        'Start-up to first healthy /health (median of 3)',
        `PostgreSQL (migrated): ${fmt.int(startup.postgres)} ms; embedded, existing DATA_DIR: ${fmt.int(startup.embedded)} ms; first start on an empty PostgreSQL database (migrations): ${fmt.int(firstStartMs)} ms`,
      ],
    ]);
    const commit = gitCommit();
    const body = [
      `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · ${cpus()[0].model} ×${cpus().length} · commit ${commit} · PostgreSQL ${await serverVersion()} · load: ${load.name}, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${SECONDS} s per scenario and server, after ${SETTLE_SECONDS} s more of the first · whole run ${Math.round((performance.now() - benchStart) / 1000)} s`,
      scenarioTable(rows),
      other,
      targetTable(checks),
    ].join('\n\n');
    console.log(`\n${body}\n`);
    if (SELECTED) log('Some scenarios only: bench/RESULTS.md left as it was.');
    else {
      writeSection(resultsFile, LABEL, body, INTRO);
      log(`Written to bench/RESULTS.md, section "${LABEL}".`);
    }
  }
} finally {
  await cleanup();
}

/**
 * Every server answers the scenario's request as the service does, with the same status,
 * media type and body, the security headers and a request id, before any is measured.
 */
async function expectSameAnswer(scenario, sides) {
  const get = async (target) => {
    const res = await fetch(target.url + scenario.path, { headers: scenario.headers?.() ?? {} });
    return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, body: await res.text() };
  };
  // Once each first: the first use of a key writes lastUsedAt.
  for (const side of sides) await get(side.server);
  const [service, ...others] = await Promise.all(sides.map((side) => get(side.server)));
  if (service.status !== scenario.status)
    throw new Error(`Scenario ${scenario.id}: the service answered ${service.status}: ${service.body.slice(0, 300)}`);
  others.forEach((answer, i) => {
    const { name } = sides[i + 1];
    const missing = ['x-request-id', 'x-content-type-options', 'content-security-policy', 'referrer-policy'].filter(
      (h) => !answer.headers.has(h),
    );
    if (
      answer.status !== service.status ||
      answer.type !== service.type ||
      answer.body !== service.body ||
      missing.length > 0
    ) {
      throw new Error(
        `Scenario ${scenario.id}: the ${name} server answers differently${missing.length ? ` (no ${missing.join(', ')})` : ''}.\n` +
          `service: ${service.status} ${service.type} ${service.body.slice(0, 400)}\n${name}: ${answer.status} ${answer.type} ${answer.body.slice(0, 400)}`,
      );
    }
  });
}

/**
 * Every server creates and revokes a key as the service does: 201 with the same fields and
 * 204, and the two audit events written alike (actor, client address, request id).
 */
async function expectSameWrites(scenario, sides) {
  const outcomes = [];
  for (const side of sides) {
    const requestId = `bench-write-check-${side.name}`;
    const headers = { ...scenario.headers(), 'x-request-id': requestId };
    const created = await fetch(`${side.server.url}/auth/region/api-keys`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ description: 'bench write check' }),
    });
    const body = await created.json();
    const revoked = await fetch(`${side.server.url}/auth/region/api-keys/${body.id}`, { method: 'DELETE', headers });
    await revoked.arrayBuffer();
    const events = await withClient(
      databaseUrl,
      async (db) =>
        (
          await db.query(
            `SELECT type, actor_type, actor_api_key_id, actor_token_preview, api_key_id = $2 AS same_key, api_key_permissions, client_address
             FROM region_events WHERE request_id = $1 ORDER BY occurred_at, seq`,
            [requestId, body.id],
          )
        ).rows,
    );
    outcomes.push({
      name: side.name,
      summary: JSON.stringify({
        created: created.status,
        fields: Object.keys(body),
        location: created.headers.has('location'),
        revoked: revoked.status,
        events,
      }),
    });
  }
  const [service, ...others] = outcomes;
  if (!service.summary.includes('"api_key.created"') || !service.summary.includes('"api_key.revoked"')) {
    throw new Error(`Scenario 6: the service's create and revoke left no events: ${service.summary}`);
  }
  for (const other of others) {
    if (other.summary !== service.summary)
      throw new Error(
        `Scenario 6: the ${other.name} server writes differently.\nservice: ${service.summary}\n${other.name}: ${other.summary}`,
      );
  }
}

/**
 * How long one first Basic request of a user takes alone (a bcrypt comparison and a
 * little), and how long the slowest of 32 simultaneous first requests of another user takes.
 */
async function firstBasicRequests(base) {
  const timed = async (authorization) => {
    const t0 = performance.now();
    const res = await fetch(`${base}/me`, { headers: { authorization } });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, ok: res.status === 200 };
  };
  const alone = await signUp(base, 'alone@example.com', 'bench password 2', 'Alone');
  const burst = await signUp(base, 'burst@example.com', 'bench password 3', 'Burst');
  const single = await timed(alone.basic);
  const all = await Promise.all(Array.from({ length: 32 }, () => timed(burst.basic)));
  return { alone: single.ms, slowest: Math.max(...all.map((r) => r.ms)), allOk: single.ok && all.every((r) => r.ok) };
}

/**
 * What LOG_LEVEL=info costs against warn, on the unknown path (no database) and on scenario 1:
 * throughput lost, and CPU per request added (pairCost).
 */
function loggingCost(scenarios) {
  return pairCost(
    () => startService({ LOG_LEVEL: 'info' }),
    () => startService(),
    scenarios,
    ['7a', '1'],
  ).then(cheapAndRegion);
}

/** A pairCost result as the report reads it: the unknown path (7a) and the region read (1). */
// A declaration, not a const: the bench runs from the top of this module, before a const below it exists.
function cheapAndRegion({ '7a': cheap, 1: region }) {
  return { cheap, region };
}

/**
 * What metrics cost (the service runs with them, as in production) against METRICS_PORT=0,
 * on the unknown path (no database) and on scenario 1 (pairCost).
 */
function metricsCost(scenarios) {
  return pairCost(
    () => startService(),
    () => startService({ METRICS_PORT: '0' }),
    scenarios,
    ['7a', '1'],
  ).then(cheapAndRegion);
}

/** Drives `targets(scenario)` once through every scenario that needs no set-up of its own, for WARMUP_SECONDS each. */
async function warmUp(scenarios, targets) {
  for (const scenario of scenarios.filter((s) => !s.before)) {
    for (const target of targets(scenario)) {
      await drive(target, scenario, WARMUP_SECONDS);
      await scenario.after?.();
    }
  }
}

/**
 * What `a` costs against `b` on each scenario of `ids`, by id: throughput lost, and CPU per
 * request added. Two processes of each start afresh and first serve every scenario once, so
 * that all have the same history: a process that has served every route runs its cheapest
 * one slower than one that has only ever served that route, so comparing the long-running
 * service with a fresh one would measure its history, not the setting. Two of each, because
 * two processes of one build differ by a few per cent on the cheapest path.
 */
async function pairCost(startA, startB, scenarios, ids) {
  const a = [keep(await startA()), keep(await startA())];
  const b = [keep(await startB()), keep(await startB())];
  await warmUp(scenarios, () => [...a, ...b]);
  const result = {};
  for (const id of ids)
    result[id] = await interleavedCost(
      a,
      b,
      scenarios.find((s) => s.id === id),
    );
  await Promise.all([...a, ...b].map((p) => p.stop()));
  return result;
}

/**
 * What the processes `a` lose against the processes `b` on a scenario, in interleaved
 * rounds (who goes first alternates, so neither side always follows the other's load), each
 * round driving every process once: throughput lost, and CPU per request added.
 */
async function interleavedCost(a, b, scenario) {
  if (!scenario) return { rps: NaN, cpu: NaN };
  const run = async (target) => {
    const result = await drive(target, scenario, SECONDS);
    await scenario.after?.();
    return result;
  };
  // One side's round: its processes' requests per second, and CPU per request over all of them.
  const side = async (processes) => {
    const results = [];
    for (const target of processes) results.push(await run(target));
    const requests = results.reduce((sum, r) => sum + r.requests, 0);
    return {
      rps: results.reduce((sum, r) => sum + r.rps, 0) / results.length,
      cpuUs: results.reduce((sum, r) => sum + r.cpuUs * r.requests, 0) / requests,
    };
  };
  await side(a);
  await side(b);
  const onA = [];
  const onB = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const first of round % 2 === 0 ? [true, false] : [false, true]) {
      if (first) onA.push(await side(a));
      else onB.push(await side(b));
    }
  }
  return { rps: 1 - roundRatio(onA, onB), cpu: 1 / cpuRatio(onA, onB) - 1 };
}

/** Median time from spawn to the first healthy /health: on the migrated server database, and on an embedded one with data. */
async function startupTimes() {
  const times = async (overrides) => {
    const ms = [];
    for (let i = 0; i < 3; i++) {
      const proc = await startService(overrides);
      ms.push(proc.startupMs);
      await proc.stop();
    }
    return median(ms);
  };
  const postgres = await times({});
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-embedded-'));
  tempDirs.push(dataDir);
  const embedded = { DATABASE_URL: 'embedded', DATA_DIR: dataDir, SEED_SAMPLE_DATA: 'true' };
  await (await startService(embedded)).stop(); // creates and fills it
  return { postgres, embedded: await times(embedded) };
}

async function profileScenarios(scenarios) {
  const dir = join(root, 'bench/profiles');
  mkdirSync(dir, { recursive: true });
  for (const scenario of scenarios) {
    await scenario.before?.();
    const name = `scenario-${scenario.id}.cpuprofile`;
    const profiled = keep(await startService({}, ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`]));
    await drive(profiled, scenario, WARMUP_SECONDS);
    const result = await drive(profiled, scenario, SECONDS * ROUNDS);
    await scenario.after?.();
    await profiled.stop();
    log(
      `\nScenario ${scenario.id}: ${scenario.name}: ${fmt.int(result.rps)} req/s under the profiler\n${summariseProfile(join(dir, name))}`,
    );
  }
}

function gitCommit() {
  try {
    const git = (...args) =>
      execFileSync('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    const sha = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--', 'src', 'bench', ':!bench/RESULTS.md', 'package.json');
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

async function serverVersion() {
  return withClient(
    serverUrl,
    async (db) => (await db.query('SHOW server_version')).rows[0].server_version.split(' ')[0],
  );
}

function pct(share) {
  return Number.isFinite(share) ? `${Math.round(share * 100)}%` : '–';
}
