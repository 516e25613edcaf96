// Rollouts behind the shipped balancer: compose's topology as local processes (HAProxy from
// Debian's package on deploy/haproxy.cfg with its addresses replaced, two instances of the
// built dist/ with compose's environment, on a database of its own on the local PostgreSQL
// server and a Redis key prefix of its own), under mixed traffic at RATE requests a second.
//
//   1. ROLL_RUNS runs (3) of 60 s: instance 1 then instance 2 restarted with SIGTERM (stop,
//      start, wait until ready, then the next), 3 s apart, then 12 s apart: no request may fail.
//   2. SIGKILL of instance 1: how many requests fail, and for how long (no target).
//   3. Instance 1's database connection cut (a TCP proxy between it and PostgreSQL): under
//      1% of requests may fail.
//
// A failure is a 5xx or a request that got no answer; a 4xx the traffic provokes by design
// is counted and shown, not failed. Exits 1 when a target is missed.
//
//   npm run roll                     # builds dist/ first
//   ROLL_RUNS=1 ROLL_RATE=50 npm run roll   # shorter, lighter, by hand
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run roll
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../bench/lib/processes.mjs';
import { adminQuery, cuttableProxy, dropDeployData, onDatabase, serviceInstance, statusOf } from './lib/topology.mjs';
import { at, mixedTraffic, summarise } from './lib/traffic.mjs';

const RATE = Number(process.env.ROLL_RATE ?? 150);
const RUNS = Number(process.env.ROLL_RUNS ?? 3);
const RUN_SECONDS = 60;
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logDir = mkdtempSync(join(tmpdir(), 'roll-'));

function ensureHaproxy() {
  try {
    execFileSync('sh', ['-c', 'command -v haproxy'], { stdio: 'ignore' });
    return;
  } catch {
    if (process.getuid?.() !== 0) {
      console.error('The rollout test runs HAProxy: sudo apt-get install haproxy');
      process.exit(2);
    }
  }
  console.log('Installing HAProxy (apt-get install haproxy)...');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', 'haproxy'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** The live instances' environment in compose.yaml, its `${NAME:-default}` and `${NAME:?…}` filled in. */
function composeEnvironment(given) {
  const lines = readFileSync('compose.yaml', 'utf8').split('\n');
  const start = lines.findIndex((l) => /^\s+environment: &api-environment$/.test(l));
  const env = {};
  for (const line of lines.slice(start + 1)) {
    if (/^\s*#/.test(line)) continue;
    const m = /^ {4}([A-Z_]+): (.*)$/.exec(line);
    if (!m) break;
    env[m[1]] = m[2]
      .replace(/^"(.*)"$/, '$1')
      .replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)\}/g, (_, name, fallback) => given[name] ?? fallback ?? '');
  }
  return env;
}

/** deploy/haproxy.cfg with local addresses; each replaced line must be there. */
function balancerConfig(ports) {
  let cfg = readFileSync('deploy/haproxy.cfg', 'utf8');
  const replace = (pattern, by) => {
    if (!pattern.test(cfg)) throw new Error(`deploy/haproxy.cfg has no ${pattern}`);
    cfg = cfg.replace(pattern, by);
  };
  replace(/bind :8080 /, `bind 127.0.0.1:${ports.live} `);
  replace(/bind :8081 /, `bind 127.0.0.1:${ports.sandbox} `);
  replace(/server api-1 api-1:3000/, `server api-1 127.0.0.1:${ports.api1}`);
  replace(/server api-2 api-2:3000/, `server api-2 127.0.0.1:${ports.api2}`);
  replace(/server sandbox sandbox:3000/, `server sandbox 127.0.0.1:${ports.none}`);
  // Addresses, not names: no Docker DNS to ask.
  replace(/\nresolvers docker\n(?: {4}.*\n)+/, '\n');
  replace(/ resolvers docker init-addr \S+/, '');
  return cfg;
}

// ---------------------------------------------------------------------------------------
// The topology

ensureHaproxy();
const dbName = `roll_${randomBytes(4).toString('hex')}`;
const redisPrefix = `roll-${randomBytes(4).toString('hex')}:`;
const initialKey = `roll-initial-${randomBytes(24).toString('hex')}`;
await adminQuery(serverUrl, `CREATE DATABASE "${dbName}"`);
const dbUrl = onDatabase(serverUrl, dbName);
const dbProxy = await cuttableProxy(new URL(dbUrl));
const ports = { live: await freePort(), sandbox: await freePort(), none: await freePort() };
const baseEnv = {
  ...composeEnvironment({ JWT_SECRET: randomBytes(32).toString('hex'), INITIAL_REGION_API_KEY: initialKey }),
  REDIS_URL: redisUrl,
  REDIS_KEY_PREFIX: redisPrefix,
  HOST: '127.0.0.1',
  METRICS_PORT: '0',
  // The traffic sends most of its region requests with one key: a roll under load, not a test of its limit.
  REGION_KEY_RATE_LIMIT: '100000/1',
};

// Instance 1 reaches PostgreSQL through a proxy that can be cut, instance 2 directly.
const instances = [];
for (const [n, databaseUrl] of [
  [1, dbProxy.rewrite(dbUrl)],
  [2, dbUrl],
])
  instances.push(
    serviceInstance({
      name: `api-${n}`,
      port: await freePort(),
      env: { ...baseEnv, DATABASE_URL: databaseUrl },
      logDir,
    }),
  );
[ports.api1, ports.api2] = instances.map((i) => i.port);

const balancerFile = join(logDir, 'haproxy.cfg');
writeFileSync(balancerFile, balancerConfig(ports));
const haproxyLog = openSync(join(logDir, 'haproxy.log'), 'a');
const haproxy = spawn('haproxy', ['-f', balancerFile], { stdio: ['ignore', haproxyLog, haproxyLog] });
const base = `http://127.0.0.1:${ports.live}`;

async function cleanUp() {
  for (const instance of instances) if (instance.child?.exitCode === null) instance.child.kill('SIGKILL');
  haproxy.kill('SIGTERM');
  dbProxy.close();
  await dropDeployData({ serverUrl, dbName, redisUrl, redisPrefix });
}

// ---------------------------------------------------------------------------------------
// The traffic (scripts/lib/traffic.mjs), all through HAProxy.

const traffic = mixedTraffic({ base: () => base, initialKey, label: 'roll' });
const load = (seconds, scenario) => traffic.load({ rate: RATE, seconds }, scenario);

async function restart(instance) {
  await instance.stop();
  await instance.start();
}

async function roll(gapSeconds) {
  await restart(instances[0]);
  await sleep(gapSeconds * 1000);
  await restart(instances[1]);
}

const rows = [];
let missed = false;

function report(name, outcome, target) {
  const { requests, statusText, failures, share, window, errors } = summarise(outcome);
  const met = target ? target(failures, share) : true;
  if (!met) missed = true;
  rows.push({
    phase: name,
    requests,
    'rate/s': outcome.rate.toFixed(1),
    'max lag ms': outcome.maxLag.toFixed(0),
    'max in flight': outcome.maxInFlight,
    statuses: statusText,
    failed: `${failures} (${(share * 100).toFixed(2)}%)${errors ? ` ${errors}` : ''}`,
    'failing for': failures ? `${window.toFixed(1)} s` : '-',
    target: target ? (met ? 'met' : 'MISSED') : 'none',
  });
  console.log(JSON.stringify(rows.at(-1)));
}

try {
  await Promise.all(instances.map((instance) => instance.start()));
  for (let i = 0; i < 100 && (await statusOf(`${base}/health/ready`)) !== 200; i++) await sleep(100);
  await traffic.seed();
  console.log(`Logs in ${logDir}; ${RATE} requests a second through HAProxy on port ${ports.live}`);

  for (let run = 1; run <= RUNS; run++) {
    const outcome = await load(RUN_SECONDS, async (started) => {
      await at(started, 3);
      await roll(3);
      await sleep(2000);
      await roll(12);
    });
    report(`rolling restart ${run} (3 s, then 12 s apart)`, outcome, (failed) => failed === 0);
  }

  const killed = await load(25, async (started) => {
    await at(started, 5);
    await instances[0].stop('SIGKILL');
    await instances[0].start();
  });
  report('SIGKILL of instance 1, then started again', killed);

  const cut = await load(30, async (started) => {
    await at(started, 5);
    await dbProxy.cut();
    await at(started, 20);
    await dbProxy.restore();
  });
  report("instance 1's database cut for 15 s", cut, (_, share) => share < 0.01);
} catch (err) {
  console.error(err);
  missed = true;
} finally {
  await cleanUp();
}
console.table(rows);
console.log(missed ? 'A target was missed.' : 'Every target met.');
process.exit(missed ? 1 : 0);
