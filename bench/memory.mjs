// What the service's resident memory is made of after the bench's load, and what a setting
// changes in it. Starts fresh services side by side (one per variant, several times over),
// drives each through the same requests as `npm run bench`'s scenarios, in interleaved
// turns, and prints each one's resident memory split into V8's heap, other anonymous memory
// (glibc's arenas, buffers) and mapped files (the node binary), with V8's own figures from
// the service's metrics.
//
//   npm run build && node bench/memory.mjs
//   MEMORY_VARIANTS='{"arena2":{"env":{"MALLOC_ARENA_MAX":"2"}},"semi8":{"node":["--max-semi-space-size=8"]}}' node bench/memory.mjs
//   BENCH_SCENARIOS=5,5z   some of the bench's scenarios only (1, 3, 4, 5, 5z, 6, 7a, 7b)
//   MEMORY_SAMPLES=3 MEMORY_PASSES=3 BENCH_SECONDS=2 BENCH_CONNECTIONS=32
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { pickLoadGenerator } from './load/index.mjs';
import { freePort } from './lib/processes.mjs';
import { fmt, median } from './lib/report.mjs';
import { fillRegion, revokeFlowLeftovers, seedPlanets, signUp, withClient } from './lib/seed.mjs';
import { productionEnv, startServed } from './lib/service.mjs';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const SAMPLES = Number(env.MEMORY_SAMPLES ?? 3);
const PASSES = Number(env.MEMORY_PASSES ?? 3);
const SELECTED = env.BENCH_SCENARIOS?.split(',').map((s) => s.trim());
const VARIANTS = { 'as served': {}, ...JSON.parse(env.MEMORY_VARIANTS ?? '{}') };

const root = fileURLToPath(new URL('..', import.meta.url));
const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_memory_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
const load = pickLoadGenerator();
const initialKey = generateApiKey();
const baseEnv = productionEnv({ databaseUrl, jwtSecret: randomBytes(32).toString('hex'), initialKey });

async function start(variant) {
  const metricsPort = await freePort();
  const proc = await startServed(root, {
    nodeArgs: variant.node,
    env: { ...baseEnv, METRICS_PORT: String(metricsPort), ...variant.env },
  });
  return Object.assign(proc, { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
}

/** Resident memory in MB: all of it, V8's heap, other anonymous memory, mapped files. */
function residentParts(pid) {
  const parts = { rss: 0, file: 0, anon: 0 };
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n');
  let name = '';
  for (const line of smaps) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) name = head[1];
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const mb = Number(rss[1]) / 1024;
    parts.rss += mb;
    if (name.startsWith('/')) parts.file += mb;
    else parts.anon += mb;
  }
  return parts;
}

/** The `count` largest resident mappings, for a closer look. */
function largestMappings(pid, count) {
  const maps = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head)
      maps.push({
        range: `${head[1]}-${head[2]}`,
        size: (parseInt(head[2], 16) - parseInt(head[1], 16)) / 2 ** 20,
        perms: head[3],
        name: head[4],
        rss: 0,
      });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) maps.at(-1).rss = Number(rss[1]) / 1024;
  }
  return maps
    .sort((a, b) => b.rss - a.rss)
    .slice(0, count)
    .map(
      (m) =>
        `    ${m.rss.toFixed(1).padStart(6)} of ${m.size.toFixed(1).padStart(7)} MB ${m.perms} ${m.range} ${m.name}`,
    )
    .join('\n');
}

async function v8Figures(proc) {
  const text = await (await fetch(proc.metricsUrl)).text();
  const value = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  const space = (kind, space) =>
    Number(new RegExp(`^nodejs_heap_space_size_${kind}_bytes\\{space="${space}"\\} (\\S+)`, 'm').exec(text)?.[1]) /
    2 ** 20;
  return {
    heapTotal: value('nodejs_heap_size_total_bytes'),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    external: value('nodejs_external_memory_bytes'),
    newSpace: space('total', 'new'),
    oldSpace: space('total', 'old'),
  };
}

try {
  await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
  const seeder = await start({});
  const { regionId, last } = await fillRegion(seeder.url, initialKey, 5);
  const user = await signUp(seeder.url, 'memory@example.com', 'memory password 1', 'Memory');
  await seedPlanets(databaseUrl, user.id, 10_000);
  await seeder.stop();
  const key = { 'x-api-key': last.key };
  const requests = [
    { id: '1', path: '/auth/regions/me', headers: key },
    { id: '3', path: '/me', headers: { authorization: `Bearer ${user.token}` } },
    { id: '4', path: '/me', headers: { authorization: user.basic } },
    { id: '5', path: '/planets?limit=100', headers: {} },
    { id: '5z', path: '/planets?limit=100', headers: { 'accept-encoding': 'gzip' } },
    { id: '6', path: '/auth/region/api-keys', headers: key, flow: 'create-delete' },
    { id: '7a', path: '/no/such/route', headers: {} },
    { id: '7b', path: '/auth/regions/me', headers: { 'x-api-key': 'rk_malformed' } },
  ].filter((r) => !SELECTED || SELECTED.includes(r.id));

  const readings = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
  for (let sample = 0; sample < SAMPLES; sample++) {
    const procs = [];
    for (const [name, variant] of Object.entries(VARIANTS)) procs.push({ name, proc: await start(variant) });
    for (let pass = 0; pass < PASSES; pass++) {
      for (const request of requests) {
        // In turns, so that each process sees the same load on the same machine.
        for (const { proc } of procs) {
          await load.run({ url: proc.url + request.path, seconds: SECONDS, connections: CONNECTIONS, ...request });
          if (request.flow) await revokeFlowLeftovers(databaseUrl, regionId);
        }
      }
    }
    for (const { name, proc } of procs) {
      const reading = { ...residentParts(proc.child.pid), ...(await v8Figures(proc)) };
      readings[name].push(reading);
      console.log(
        `sample ${sample + 1} ${name.padEnd(12)} rss ${fmt.int(reading.rss)} MB (anonymous ${fmt.int(reading.anon)}, files ${fmt.int(reading.file)}); ` +
          `V8 heap ${fmt.int(reading.heapTotal)} MB (${fmt.int(reading.heapUsed)} used; new space ${fmt.int(reading.newSpace)}, old ${fmt.int(reading.oldSpace)}), external ${fmt.int(reading.external)}`,
      );
      if (env.MEMORY_MAPS) console.log(largestMappings(proc.child.pid, Number(env.MEMORY_MAPS)));
      await proc.stop();
    }
  }
  console.log('\nmedians:');
  for (const [name, list] of Object.entries(readings)) {
    const m = (field) => fmt.int(median(list.map((r) => r[field])));
    console.log(
      `  ${name.padEnd(12)} rss ${m('rss')} MB, highest ${fmt.int(Math.max(...list.map((r) => r.rss)))}; anonymous beside V8's heap ${fmt.int(median(list.map((r) => r.anon - r.heapTotal)))} MB; V8 heap ${m('heapTotal')} (${m('heapUsed')} used)`,
    );
  }
} finally {
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)).catch(() => {});
}
