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
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serveCommand } from '../bench/lib/service.mjs';

const RATE = Number(process.env.ROLL_RATE ?? 150);
const RUNS = Number(process.env.ROLL_RUNS ?? 3);
const RUN_SECONDS = 60;
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logDir = mkdtempSync(join(tmpdir(), 'roll-'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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

const freePort = () =>
  new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });

async function admin(sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A TCP proxy to PostgreSQL that can be cut (open connections reset, new ones refused) and
 * restored. It runs in a thread of its own, so that the load this process sends never
 * slows the instance's database traffic.
 */
async function cuttableProxy(target) {
  const worker = new Worker(
    `
    const { createServer, connect } = require('node:net');
    const { parentPort, workerData: target } = require('node:worker_threads');
    const sockets = new Set();
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const [a, b] of [[client, upstream], [upstream, client]]) {
        sockets.add(a);
        a.pipe(b);
        a.on('error', () => b.destroy());
        a.on('close', () => (sockets.delete(a), b.destroy()));
      }
    });
    const listen = (port) => server.listen(port, '127.0.0.1', () => parentPort.postMessage(server.address().port));
    parentPort.on('message', (command) => {
      if (command === 'cut') {
        server.close();
        for (const s of sockets) s.resetAndDestroy();
        parentPort.postMessage('cut');
      } else listen(command);
    });
    listen(0);
    `,
    { eval: true, workerData: { host: target.hostname, port: Number(target.port || 5432) } },
  );
  const reply = () => new Promise((resolve) => worker.once('message', resolve));
  const port = await reply();
  return {
    port,
    cut: () => (worker.postMessage('cut'), reply()),
    restore: () => (worker.postMessage(port), reply()),
    close: () => worker.terminate(),
  };
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
await admin(`CREATE DATABASE "${dbName}"`);
const dbUrl = new URL(serverUrl);
dbUrl.pathname = `/${dbName}`;
const dbProxy = await cuttableProxy(dbUrl);
const ports = { live: await freePort(), sandbox: await freePort(), none: await freePort() };
const serve = serveCommand('.');
const baseEnv = {
  ...serve.env,
  ...composeEnvironment({ JWT_SECRET: randomBytes(32).toString('hex'), INITIAL_REGION_API_KEY: initialKey }),
  REDIS_URL: redisUrl,
  REDIS_KEY_PREFIX: redisPrefix,
  HOST: '127.0.0.1',
  METRICS_PORT: '0',
};

const instances = [1, 2].map((n) => ({ name: `api-${n}`, port: 0, child: null }));
instances[0].databaseUrl = Object.assign(new URL(dbUrl), { hostname: '127.0.0.1', port: String(dbProxy.port) }).href;
instances[1].databaseUrl = dbUrl.href;
for (const instance of instances) instance.port = await freePort();
[ports.api1, ports.api2] = instances.map((i) => i.port);

async function startInstance(instance) {
  const out = openSync(join(logDir, `${instance.name}.log`), 'a');
  instance.child = spawn(process.execPath, [...serve.flags, 'dist/src/main.js'], {
    env: { PATH: process.env.PATH, ...baseEnv, DATABASE_URL: instance.databaseUrl, PORT: String(instance.port) },
    stdio: ['ignore', out, out],
  });
  instance.exited = new Promise((resolve) => instance.child.once('exit', resolve));
  // Generous: on a busy machine a start can take most of a minute.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const status = await fetch(`http://127.0.0.1:${instance.port}/health/ready`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (instance.child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`${instance.name} did not become ready; see ${join(logDir, `${instance.name}.log`)}`);
}

async function stopInstance(instance, signal = 'SIGTERM') {
  instance.child.kill(signal);
  await instance.exited;
}

const balancerFile = join(logDir, 'haproxy.cfg');
writeFileSync(balancerFile, balancerConfig(ports));
const haproxyLog = openSync(join(logDir, 'haproxy.log'), 'a');
const haproxy = spawn('haproxy', ['-f', balancerFile], { stdio: ['ignore', haproxyLog, haproxyLog] });
const base = `http://127.0.0.1:${ports.live}`;

async function cleanUp() {
  for (const instance of instances) if (instance.child?.exitCode === null) instance.child.kill('SIGKILL');
  haproxy.kill('SIGTERM');
  dbProxy.close();
  await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const stale = await redis.keys(`${redisPrefix}*`);
    if (stale.length) await redis.del(...stale);
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------
// The traffic: reads, sign-ups, planets created, changed and deleted by their creators,
// region keys created and deleted.

const users = [];
const planets = [];
const keys = [];
const pick = (list) => list[Math.floor(Math.random() * list.length)];

async function send(method, path, { body, token, apiKey } = {}) {
  const headers = { 'x-request-id': randomUUID() };
  if (body) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  if (apiKey) headers['x-api-key'] = apiKey;
  const res = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const text = await res.text();
  return {
    status: res.status,
    body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {},
  };
}

async function signUp() {
  const email = `roll-${randomUUID()}@example.com`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const made = await send('POST', '/user/signup', { body: { name: 'Roll', email, password } });
  if (made.status !== 201) return made;
  const issued = await send('POST', '/auth/token', { body: { email, password } });
  if (issued.status === 201) users.push({ token: issued.body.token });
  return issued;
}

async function createPlanet() {
  const owner = pick(users);
  const res = await send('POST', '/planets', {
    body: { name: `Roll ${randomBytes(3).toString('hex')}`, type: 'terrestrial', tags: ['roll'] },
    token: owner.token,
  });
  if (res.status === 201) planets.push({ id: res.body.id, owner });
  return res;
}

/** A planet no other request is using, out of the list until `done` puts it back. */
async function withPlanet(work, { keep = true } = {}) {
  const planet = planets.splice(Math.floor(Math.random() * planets.length), 1)[0];
  if (!planet) return createPlanet();
  const res = await work(planet);
  if (keep || res.status >= 300) planets.push(planet);
  return res;
}

/** Every key change locks the region's row, one at a time: a few a second, and never near the region's limit. */
async function changeKey() {
  if (keys.length >= 10) return send('DELETE', `/auth/region/api-keys/${keys.shift()}`, { apiKey: initialKey });
  const res = await send('POST', '/auth/region/api-keys', { body: { description: 'roll' }, apiKey: initialKey });
  if (res.status === 201) keys.push(res.body.id);
  return res;
}

const OPERATIONS = [
  [30, () => send('GET', `/planets?limit=${1 + Math.floor(Math.random() * 20)}`)],
  [15, () => (planets.length ? send('GET', `/planets/${pick(planets).id}`) : send('GET', '/planets'))],
  [10, () => send('GET', '/auth/regions/me', { apiKey: initialKey })],
  [5, () => send('GET', '/me', { token: pick(users).token })],
  [14, createPlanet],
  [
    14,
    () =>
      withPlanet((p) =>
        send('PUT', `/planets/${p.id}`, {
          body: { name: `Roll ${randomBytes(3).toString('hex')}`, type: 'dwarf' },
          token: p.owner.token,
        }),
      ),
  ],
  [
    8,
    () =>
      planets.length > 20
        ? withPlanet((p) => send('DELETE', `/planets/${p.id}`, { token: p.owner.token }), { keep: false })
        : createPlanet(),
  ],
  [4, changeKey],
];
const totalWeight = OPERATIONS.reduce((sum, [w]) => sum + w, 0);
function operation() {
  let r = Math.random() * totalWeight;
  for (const [weight, run] of OPERATIONS) if ((r -= weight) < 0) return run;
  return OPERATIONS[0][1];
}

// Sign-ups count against the limit per client address (20 a minute), and every request
// comes from this one: one every 6 s keeps them all 201.
let lastSignUp = 0;

/**
 * Sends RATE requests a second, on schedule whatever the answers take, while `scenario`
 * runs and for at least `seconds`; returns what each got, with when it was sent.
 */
async function load(seconds, scenario) {
  const results = [];
  const started = performance.now();
  let sent = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let maxLag = 0;
  let running = true;
  // Its error, if any, is thrown once the requests it ran under have all ended.
  const scenarioDone = scenario(started).then(
    () => undefined,
    (err) => err,
  );
  void scenarioDone.then(() => (running = false));
  const pending = [];
  while (running || performance.now() - started < seconds * 1000) {
    const now = performance.now();
    const due = Math.floor(((now - started) / 1000) * RATE);
    if (due > sent) maxLag = Math.max(maxLag, now - started - (sent / RATE) * 1000);
    for (; sent < due; sent++) {
      const at = performance.now() - started;
      const signUpDue = performance.now() - lastSignUp > 6000;
      const run = signUpDue ? ((lastSignUp = performance.now()), signUp) : operation();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      pending.push(
        run()
          .then(
            (res) => results.push({ at, status: res.status }),
            (err) => results.push({ at, status: 'error', error: err.cause?.code ?? err.message }),
          )
          .finally(() => inFlight--),
      );
    }
    await sleep(5);
  }
  await Promise.all(pending);
  const failed = await scenarioDone;
  if (failed) throw failed;
  const elapsed = (performance.now() - started) / 1000;
  return { results, elapsed, rate: sent / elapsed, maxLag, maxInFlight };
}

const at = (started, seconds) => sleep(Math.max(0, started + seconds * 1000 - performance.now()));

async function restart(instance) {
  await stopInstance(instance);
  await startInstance(instance);
}

async function roll(gapSeconds) {
  await restart(instances[0]);
  await sleep(gapSeconds * 1000);
  await restart(instances[1]);
}

const isFailure = (r) => r.status === 'error' || r.status >= 500;
const rows = [];
let missed = false;

function report(name, outcome, target) {
  const statuses = {};
  for (const r of outcome.results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const failures = outcome.results.filter(isFailure);
  const share = failures.length / outcome.results.length;
  // Between the first and the last failed request's sending (they end in another order).
  const sentAt = failures.map((f) => f.at);
  const window = failures.length ? `${((Math.max(...sentAt) - Math.min(...sentAt)) / 1000).toFixed(1)} s` : '-';
  const met = target ? target(failures.length, share) : true;
  if (!met) missed = true;
  const errors = [...new Set(failures.filter((f) => f.error).map((f) => f.error))].join(',');
  rows.push({
    phase: name,
    requests: outcome.results.length,
    'rate/s': outcome.rate.toFixed(1),
    'max lag ms': outcome.maxLag.toFixed(0),
    'max in flight': outcome.maxInFlight,
    statuses: Object.entries(statuses)
      .map(([s, n]) => `${s}:${n}`)
      .join(' '),
    failed: `${failures.length} (${(share * 100).toFixed(2)}%)${errors ? ` ${errors}` : ''}`,
    'failing for': window,
    target: target ? (met ? 'met' : 'MISSED') : 'none',
  });
  console.log(JSON.stringify(rows.at(-1)));
}

try {
  await Promise.all(instances.map(startInstance));
  for (
    let i = 0;
    i < 100 &&
    (await fetch(`${base}/health/ready`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    i++
  )
    await sleep(100);
  for (let i = 0; i < 4; i++) await signUp();
  lastSignUp = performance.now();
  for (let i = 0; i < 20; i++) await createPlanet();
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
    await stopInstance(instances[0], 'SIGKILL');
    await startInstance(instances[0]);
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
