// CPU profiles of the service and the benchmark's other servers on one path, side by side,
// in µs of CPU per request by package (self time): where the service spends what the ceiling
// (bare Nest + Passport) or the reference (bare Fastify + pg) does not, and what the required
// stack itself costs against the reference. Each server runs alone under the same load
// (wrk, 32 connections), on a database of its own made for the run, with a region whose key
// the requests may send.
//
//   node bench/profile-servers.mjs /auth/regions/me api-key         (servers: service,ceiling,reference)
//   node bench/profile-servers.mjs /me bearer service,ceiling
//   node bench/profile-servers.mjs /no/such/route none service,problem
//   node bench/profile-servers.mjs /auth/regions/me malformed service,problem
//
// Credentials: api-key (X-API-Key of the region), bearer or basic (a user's), malformed (the
// bench's 401: an X-API-Key that is no key), none.
// DATABASE_URL: the server to make the database on (this machine's by default); BENCH_SECONDS (10) per server.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { freePort } from './lib/processes.mjs';
import { perRequestByPlace } from './lib/profile-summary.mjs';
import { signUp, withClient } from './lib/seed.mjs';
import { productionEnv, startServed } from './lib/service.mjs';

const root = new URL('..', import.meta.url).pathname;
const [path = '/auth/regions/me', credentials = 'api-key', list = 'service,ceiling,reference'] = process.argv.slice(2);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `profile_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
const initialKey = generateApiKey();
const env = { ...productionEnv({ databaseUrl, jwtSecret: randomBytes(32).toString('hex'), initialKey }) };
const dir = mkdtempSync(join(tmpdir(), 'profile-servers-'));
const files = {
  service: 'dist/src/main.js',
  ceiling: 'bench/ceiling-server.mjs',
  reference: 'bench/reference-server.mjs',
  problem: 'bench/problem-server.mjs',
};

async function start(name, nodeArgs = []) {
  return startServed(root, {
    script: files[name],
    nodeArgs,
    env: { ...env, METRICS_PORT: String(await freePort()), DATABASE_POOL_SIZE: '10' },
  });
}

await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
try {
  // The service migrates the database and makes the region of the initial key.
  const first = await start('service');
  const user = await signUp(first.url, 'profile@example.com', 'profile password 1', 'Profile');
  await first.stop();
  const headers = {
    'api-key': ['-H', `X-API-Key: ${initialKey}`],
    bearer: ['-H', `Authorization: Bearer ${user.token}`],
    basic: ['-H', `Authorization: ${user.basic}`],
    malformed: ['-H', 'X-API-Key: rk_malformed'],
    none: [],
  }[credentials];
  if (!headers) throw new Error(`Credentials: api-key, bearer, basic, malformed or none, not ${credentials}`);

  const results = [];
  for (const name of list.split(',')) {
    const server = await start(name, ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`]);
    const wrk = (s) => execFileSync('wrk', ['-t1', '-c32', `-d${s}s`, ...headers, server.url + path]).toString();
    wrk(3);
    const out = wrk(seconds);
    await server.stop();
    const requests = Number(/(\d+) requests in/.exec(out)[1]);
    if (/Non-2xx/.test(out) && !['none', 'malformed'].includes(credentials))
      throw new Error(`${name} refused the requests:\n${out}`);
    results.push({ name, requests, byPlace: perRequestByPlace(join(dir, `${name}.cpuprofile`), requests) });
  }

  console.log(
    `${path} (${credentials}), ${seconds} s each: ${results.map((r) => `${r.name} ${r.requests} requests`).join(', ')}`,
  );
  console.log(`${'µs of CPU per request (self time)'.padEnd(44)}${results.map((r) => r.name.padStart(11)).join('')}`);
  const places = [...new Set(results.flatMap((r) => [...r.byPlace.keys()]))];
  const of = (r, place) => r.byPlace.get(place) ?? 0;
  const spread = (place) =>
    Math.max(...results.map((r) => of(r, place))) - Math.min(...results.map((r) => of(r, place)));
  const total = (r) => [...r.byPlace.values()].reduce((a, b) => a + b, 0);
  console.log(`${'busy, all places'.padEnd(44)}${results.map((r) => total(r).toFixed(2).padStart(11)).join('')}`);
  for (const place of places.sort((a, b) => spread(b) - spread(a)).slice(0, 25))
    console.log(`${place.slice(0, 43).padEnd(44)}${results.map((r) => of(r, place).toFixed(2).padStart(11)).join('')}`);
} finally {
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}
