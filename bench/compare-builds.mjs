// `node bench/compare-builds.mjs <other checkout>`: this checkout's built service against
// another checkout's (built too: `npm ci && npm run build` there), both on one PostgreSQL
// database and Redis, on the hot paths (GET /auth/regions/me with an API key, GET /me with
// Bearer and with Basic, GET /planets) and on start-up to the first healthy /health. Rounds interleave the
// two, and who goes first alternates; a ratio is the median of the per-round ratios of this
// build to the other (req/s; CPU per request, the other's over this one's; start-up, this
// one's over the other's), which other work on a shared machine disturbs far less than the
// figures themselves. For the cost of a change that should cost nothing, measured against
// the commit before it.
//
//   node bench/compare-builds.mjs ../base        BENCH_ROUNDS=7 BENCH_SECONDS=3 BENCH_CONNECTIONS=32
//   BENCH_VERBOSE=1                              also each round's figures
//   BENCH_ONLY='regions/me'                      only the scenarios whose name holds it, no start-up (a short run)
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { pickLoadGenerator } from './load/index.mjs';
import { freePort } from './lib/processes.mjs';
import { cpuRatio, fmt, keyValueTable, median, roundRatio, summarise } from './lib/report.mjs';
import { fillRegion, seedPlanets, signUp, withClient } from './lib/seed.mjs';
import { makeDatabase, measure, productionEnv, startServed } from './lib/service.mjs';

const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const PLANETS = 10_000;
if (!process.argv[2]) throw new Error('Usage: node bench/compare-builds.mjs <other checkout, built>');
const builds = {
  this: fileURLToPath(new URL('..', import.meta.url)),
  other: resolve(process.argv[2]),
};

const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
const serviceEnv = productionEnv({
  databaseUrl,
  jwtSecret: randomBytes(32).toString('hex'),
  initialKey: generateApiKey(),
});
const load = pickLoadGenerator();

/** A checkout's service, started as its `npm run serve` starts it, metrics on a port of its own. */
async function startBuild(root) {
  return startServed(root, { env: { ...serviceEnv, METRICS_PORT: String(await freePort()) } });
}

async function drive(server, scenario, seconds) {
  const spec = { url: server.url + scenario.path, seconds, connections: CONNECTIONS, headers: scenario.headers };
  const result = await measure(load, server, spec);
  if (result.non2xx + result.errors > 0) throw new Error(`${scenario.name}: ${result.non2xx} non-2xx answers`);
  return result;
}

/** Both builds by turns, `rounds` times, the first of each round alternating. */
async function interleaved(rounds, run) {
  const results = { this: [], other: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['this', 'other'] : ['other', 'this']) results[name].push(await run(name));
  }
  return results;
}

const running = [];
try {
  await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
  // The other build's migrations make the database; neither measured service is the one that ran them.
  await makeDatabase(builds.other, { ...serviceEnv, METRICS_PORT: String(await freePort()) });
  running.push(await startBuild(builds.other));
  running.push(await startBuild(builds.this));
  const servers = { other: running[0], this: running[1] };
  const { last } = await fillRegion(servers.this.url, serviceEnv.INITIAL_REGION_API_KEY, 5);
  const user = await signUp(servers.this.url, 'bench@example.com', 'bench password 1', 'Bench');
  await seedPlanets(databaseUrl, user.id, PLANETS);
  const scenarios = [
    { name: 'GET /auth/regions/me, API key', path: '/auth/regions/me', headers: { 'x-api-key': last.key } },
    { name: 'GET /me, Bearer', path: '/me', headers: { authorization: `Bearer ${user.token}` } },
    { name: 'GET /me, Basic (warm)', path: '/me', headers: { authorization: user.basic } },
    { name: `GET /planets?limit=100 (${fmt.int(PLANETS)} planets)`, path: '/planets?limit=100' },
  ].filter((scenario) => !env.BENCH_ONLY || scenario.name.includes(env.BENCH_ONLY));
  console.log(
    `${load.name}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s; this: ${builds.this}; other: ${builds.other}`,
  );
  for (const scenario of scenarios) for (const server of running) await drive(server, scenario, SECONDS);

  const rows = [];
  for (const scenario of scenarios) {
    const rounds = await interleaved(ROUNDS, (name) => drive(servers[name], scenario, SECONDS));
    const [mine, theirs] = [summarise(rounds.this), summarise(rounds.other)];
    rows.push([
      scenario.name,
      `this ${fmt.int(mine.rps)} req/s, ${fmt.int(mine.cpuUs)} µs CPU/req; other ${fmt.int(theirs.rps)} req/s, ${fmt.int(theirs.cpuUs)} µs CPU/req; ` +
        `ratio this/other: req/s ${fmt.ratio(roundRatio(rounds.this, rounds.other))}, CPU ${fmt.ratio(cpuRatio(rounds.this, rounds.other))}`,
    ]);
    console.log(rows.at(-1).join(': '));
    if (env.BENCH_VERBOSE) {
      const each = (side) => side.map((r) => `${fmt.int(r.rps)}/${fmt.int(r.cpuUs)}`).join(' ');
      console.log(`  rounds (req/s / µs CPU per request): this ${each(rounds.this)}; other ${each(rounds.other)}`);
    }
  }
  await Promise.all(running.splice(0).map((server) => server.stop()));
  // A short run leaves start-up out: the other build may refuse a schema this one migrated further.
  if (!env.BENCH_ONLY) {
    const startups = await interleaved(ROUNDS, async (name) => {
      const server = await startBuild(builds[name]);
      await server.stop();
      return server.startupMs;
    });
    rows.push([
      'Start-up to healthy, PostgreSQL (migrated)',
      `this ${fmt.int(median(startups.this))} ms, other ${fmt.int(median(startups.other))} ms; ` +
        `ratio this/other ${fmt.ratio(median(startups.this.map((ms, i) => ms / startups.other[i])))}`,
    ]);
  }
  console.log(`\n${keyValueTable(rows)}`);
} finally {
  await Promise.allSettled(running.map((server) => server.stop()));
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)).catch(() => {});
}
