// Past one machine: three instances of the built dist/ (production settings) through
// PgBouncer in transaction mode with its default settings (scripts/pgbouncer.sh, a PgBouncer
// of this script's own on a free port), on a database of their own created and dropped on the
// PostgreSQL server itself, their Redis behind a proxy that can be cut, under mixed traffic
// at RATE requests a second spread over the instances. One line per scenario, PASS or FAIL
// with its figures:
//
//   a. the three started at once on the fresh database: all ready, each migration applied once;
//   b. 5 `migration show` runs through the pooler under load: each succeeds, and then no
//      advisory lock is held by an idle session;
//   c. an instance restarted (SIGTERM, start, ready) under load: no failed request;
//   d. the planets table locked for 15 s (ACCESS EXCLUSIVE, on the server directly) while a
//      request reads it: 503 within DATABASE_STATEMENT_TIMEOUT_MS (5 s here) + 1 s, and right
//      after the answer no backend of the database but the locker waits for a lock;
//   e. `sslmode=require` against a self-signed certificate (a throw-away PostgreSQL cluster):
//      an instance starts, and pg_stat_ssl says its connections are encrypted;
//   f. `sslmode=verify-full` with another CA's certificate: the start is refused, exit code
//      non-zero, with one line that says so (every other line of output a JSON log line);
//   g. Redis cut for 10 s under load: every instance stays ready, no 5xx;
//   h. every backend of the database terminated twice under writes: no 500 (503s counted);
//   i. an instance started while PgBouncer is down for 8 s: ready once it is back, no restart;
//   j. PostgreSQL's slots nearly spent by other clients (2 non-reserved left), 20 requests a
//      second to two instances connected directly: under 2% fail;
//
// and `migration show` through PgBouncer in session mode. A failed request is a 5xx or one
// that got no answer. Exits 1 when a target is missed.
//
//   npm run pooler                          # builds dist/ first
//   POOLER_RATE=20 npm run pooler           # lighter
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run pooler
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../bench/lib/processes.mjs';
import { productionEnv } from '../bench/lib/service.mjs';
import { adminQuery, cuttableProxy, dropDeployData, onDatabase, serviceInstance, statusOf } from './lib/topology.mjs';
import { at, isFailure, mixedTraffic, summarise } from './lib/traffic.mjs';

const RATE = Number(process.env.POOLER_RATE ?? 40);
const STATEMENT_TIMEOUT_MS = 5000;
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logDir = mkdtempSync(join(tmpdir(), 'pooler-'));
const asRoot = process.getuid?.() === 0;
const server = new URL(serverUrl);

// ---------------------------------------------------------------------------------------
// Processes run as the postgres user (PgBouncer and PostgreSQL refuse root).

const owned = (dir) => {
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  return dir;
};
const asPostgres = (command, args, options = {}) =>
  asRoot
    ? execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], options)
    : execFileSync(command, args, options);

/** A PgBouncer of this script's own (scripts/pgbouncer.sh), on a free port. */
async function pgBouncer(mode) {
  const port = await freePort();
  const env = {
    ...process.env,
    PGBOUNCER_PORT: String(port),
    PGBOUNCER_DIR: mkdtempSync(join(tmpdir(), `pooler-pgbouncer-${mode}-`)),
    PGBOUNCER_SERVER: `host=${server.hostname} port=${server.port || 5432}`,
  };
  const run = (command) =>
    execFileSync('sh', ['scripts/pgbouncer.sh', command, mode], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  run('start');
  return {
    url: (database) => onDatabase(`postgres://postgres@127.0.0.1:${port}/`, database),
    start: () => run('start'),
    stop: () => run('stop'),
    dir: env.PGBOUNCER_DIR,
  };
}

// ---------------------------------------------------------------------------------------
// The topology

const dbName = `pooler_${randomBytes(4).toString('hex')}`;
const redisPrefix = `pooler-${randomBytes(4).toString('hex')}:`;
const initialKey = `pooler-initial-${randomBytes(24).toString('hex')}`;
const jwtSecret = randomBytes(32).toString('hex');
const directDbUrl = onDatabase(serverUrl, dbName);
const cleanups = [];

const bouncer = await pgBouncer('transaction');
cleanups.push(() => bouncer.stop());
const pooledDbUrl = bouncer.url(dbName);
const redisProxy = await cuttableProxy(new URL(redisUrl));
cleanups.push(() => redisProxy.close());

/** The instances' settings: production's, on `databaseUrl`, with Redis through the proxy. */
const settings = (databaseUrl) => ({
  ...productionEnv({ databaseUrl, jwtSecret, initialKey }),
  REDIS_URL: redisProxy.rewrite(redisUrl),
  REDIS_KEY_PREFIX: redisPrefix,
  HOST: '127.0.0.1',
  METRICS_PORT: '0',
  DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
});

const instances = [];
async function newInstance(name, databaseUrl, extra = {}) {
  const instance = serviceInstance({
    name,
    port: await freePort(),
    env: { ...settings(databaseUrl), ...extra },
    logDir,
  });
  instances.push(instance);
  return instance;
}
const pooled = [];
for (let n = 1; n <= 3; n++) pooled.push(await newInstance(`api-${n}`, pooledDbUrl));

// The traffic goes round the instances in rotation; a restart takes one out first, as a
// balancer's health check would.
let rotation = [...pooled];
let turn = 0;
const traffic = mixedTraffic({ base: () => rotation[turn++ % rotation.length].url, initialKey, label: 'pooler' });
const load = (seconds, scenario, options = {}) => traffic.load({ rate: RATE, seconds, ...options }, scenario);

/** `migration show` through the pooler, as an operator runs it; resolves to { code, ms, output }. */
function cli(args, env, timeoutMs = 60_000) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['dist/src/cli.js', ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, ms: performance.now() - started, output });
    });
  });
}

// ---------------------------------------------------------------------------------------
// The report

const lines = [];
let missed = false;
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const trafficFigures = (outcome) => {
  const s = summarise(outcome);
  return `${s.requests} requests at ${outcome.rate.toFixed(1)}/s [${s.statusText}], ${s.failures} failed${s.errors ? ` (${s.errors})` : ''}`;
};

async function scenario(name, run) {
  let line;
  try {
    const { pass, figures } = await run();
    line = `${pass ? 'PASS' : 'FAIL'}  ${name}: ${figures}`;
    if (!pass) missed = true;
  } catch (err) {
    missed = true;
    line = `FAIL  ${name}: ${err.message.split('\n')[0]}`;
  }
  lines.push(line);
  console.log(line);
}

async function backendsOf(database, where = 'true') {
  return adminQuery(
    serverUrl,
    `SELECT pid, state, wait_event_type, backend_type FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid() AND ${where}`,
    [database],
  );
}

// ---------------------------------------------------------------------------------------
// The scenarios

async function startTogether() {
  const ms = await Promise.all(pooled.map((instance) => instance.start()));
  const applied = await adminQuery(directDbUrl, 'SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
  const twice = applied.filter((m) => m.n > 1).length;
  return {
    pass: applied.length > 0 && twice === 0,
    figures: `ready in ${ms.map(seconds).join(', ')}; ${applied.length} migrations, ${twice} applied more than once`,
  };
}

async function migrationShows() {
  const runs = [];
  // The database's server connections (PgBouncer's), sampled through the load: what the
  // three instances' pools of 10 need on the server behind a transaction pooler.
  const backends = [];
  const outcome = await load(20, async (started) => {
    const sampling = (async () => {
      while (performance.now() - started < 20_000) {
        backends.push((await backendsOf(dbName, "backend_type = 'client backend'")).length);
        await sleep(500);
      }
    })();
    await at(started, 3);
    for (let i = 0; i < 5; i++) runs.push(await cli(['migration', 'show'], settings(pooledDbUrl)));
    await sampling;
  });
  const locks = await adminQuery(
    serverUrl,
    `SELECT a.pid, a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND a.datname = $1`,
    [dbName],
  );
  const idleHolders = locks.filter((l) => l.state !== 'active').length;
  const ok = runs.filter((r) => r.code === 0).length;
  return {
    pass: ok === 5 && idleHolders === 0,
    figures:
      `${ok}/5 succeeded (longest ${seconds(Math.max(...runs.map((r) => r.ms)))}); advisory locks held after: ${locks.length} (${idleHolders} by an idle session); ` +
      `${trafficFigures(outcome)}; server connections of the database behind PgBouncer: at most ${Math.max(...backends)} (median ${backends.sort((x, y) => x - y)[backends.length >> 1]}) for 3 instances × pool 10 at ${RATE} req/s plus the CLI`,
  };
}

async function restartUnderLoad() {
  const instance = pooled[2];
  let readyMs = 0;
  const outcome = await load(25, async (started) => {
    await at(started, 5);
    rotation = pooled.filter((i) => i !== instance);
    await instance.stop();
    readyMs = await instance.start();
    rotation = [...pooled];
  });
  const { failures } = summarise(outcome);
  return {
    pass: failures === 0,
    figures: `ready again ${seconds(readyMs)} after its start; ${trafficFigures(outcome)}`,
  };
}

async function lockedTable() {
  const locker = new pg.Client({ connectionString: directDbUrl });
  await locker.connect();
  try {
    const lockerPid = (await locker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE planets IN ACCESS EXCLUSIVE MODE');
    const locked = performance.now();
    const started = performance.now();
    const res = await fetch(`${pooled[0].url}/planets?limit=5`);
    await res.arrayBuffer();
    const ms = performance.now() - started;
    const waiting = (await backendsOf(dbName, `wait_event_type = 'Lock' AND pid <> ${Number(lockerPid)}`)).length;
    await sleep(Math.max(0, locked + 15_000 - performance.now()));
    await locker.query('ROLLBACK');
    const after = await statusOf(`${pooled[0].url}/planets?limit=5`);
    return {
      pass: res.status === 503 && ms <= STATEMENT_TIMEOUT_MS + 1000 && waiting === 0,
      figures: `answered ${res.status} in ${seconds(ms)} (limit ${seconds(STATEMENT_TIMEOUT_MS + 1000)}); backends waiting for a lock right after: ${waiting}; after the 15 s lock: ${after}`,
    };
  } finally {
    await locker.end();
  }
}

/** A PostgreSQL cluster of its own, TLS on with a self-signed certificate; and another CA's certificate. */
async function tlsCluster() {
  const dir = owned(mkdtempSync(join(tmpdir(), 'pooler-tls-')));
  chmodSync(dir, 0o755);
  const binDir =
    process.env.PG_BINDIR ??
    join('/usr/lib/postgresql', readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0], 'bin');
  const certificate = (name, subject) =>
    asPostgres(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${subject}`,
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, `${name}.key`),
        '-out',
        join(dir, `${name}.crt`),
      ],
      { stdio: 'ignore' },
    );
  certificate('server', '127.0.0.1');
  certificate('other-ca', 'Another CA');
  const port = await freePort();
  const data = join(dir, 'data');
  asPostgres(join(binDir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], {
    stdio: 'ignore',
  });
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c ssl=on',
    `-c ssl_cert_file=${join(dir, 'server.crt')}`,
    `-c ssl_key_file=${join(dir, 'server.key')}`,
    '-c max_connections=20',
    '-c shared_buffers=16MB',
    '-c fsync=off',
  ].join(' ');
  asPostgres(join(binDir, 'pg_ctl'), ['-D', data, '-l', join(dir, 'postgres.log'), '-o', options, '-w', 'start'], {
    stdio: 'ignore',
  });
  cleanups.push(() => {
    asPostgres(join(binDir, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, otherCa: join(dir, 'other-ca.crt') };
}

async function tlsRequire(cluster) {
  const instance = await newInstance('api-tls', `${cluster.url}?sslmode=require`, {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `${redisPrefix}tls:`,
  });
  const ms = await instance.start();
  try {
    const rows = await adminQuery(
      cluster.url,
      `SELECT s.ssl, s.version FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
        WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()`,
    );
    const encrypted = rows.filter((r) => r.ssl);
    return {
      pass: rows.length > 0 && encrypted.length === rows.length,
      figures: `ready in ${seconds(ms)}; ${encrypted.length} of its ${rows.length} connections encrypted (${[...new Set(encrypted.map((r) => r.version))].join(', ')})`,
    };
  } finally {
    await instance.stop();
  }
}

async function tlsWrongCa(cluster) {
  const instance = await newInstance(
    'api-wrong-ca',
    `${cluster.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(cluster.otherCa)}`,
    { REDIS_URL: redisUrl, DATABASE_CONNECT_TIMEOUT_MS: '10000' },
  );
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { PATH: process.env.PATH, ...instance.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise((resolve) => child.once('exit', (c, signal) => resolve(c ?? signal)));
  clearTimeout(timer);
  const ms = performance.now() - started;
  const printed = output.split('\n').filter((l) => l.trim());
  const parsed = printed.map((l) => {
    try {
      const value = JSON.parse(l);
      return value && typeof value === 'object' ? value : null;
    } catch {
      return null;
    }
  });
  const plain = printed.filter((_, i) => !parsed[i]);
  const errorLines = plain.length ? plain : printed.filter((_, i) => parsed[i].level >= 50);
  const said = errorLines[0] ?? '';
  return {
    pass: typeof code === 'number' && code !== 0 && plain.length <= 1 && errorLines.length === 1,
    figures: `exit ${code} after ${seconds(ms)}; ${plain.length} non-JSON line(s), ${errorLines.length} error line(s) of ${printed.length}: ${said}`,
  };
}

async function redisCut() {
  const readiness = [];
  const outcome = await load(20, async (started) => {
    await at(started, 4);
    await redisProxy.cut();
    const until = started + 14_000;
    while (performance.now() < until) {
      readiness.push(...(await Promise.all(pooled.map((i) => statusOf(`${i.url}/health/ready`)))));
      await sleep(250);
    }
    await redisProxy.restore();
  });
  const unready = readiness.filter((s) => s !== 200).length;
  const s = summarise(outcome);
  return {
    pass: unready === 0 && s.failures === 0,
    figures: `readiness polled ${readiness.length} times during the cut, ${unready} not 200; ${trafficFigures(outcome)}`,
  };
}

async function terminateUnderWrites() {
  const terminated = [];
  const outcome = await load(
    25,
    async (started) => {
      for (const second of [5, 13]) {
        await at(started, second);
        const [{ n }] = await adminQuery(
          serverUrl,
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [dbName],
        );
        terminated.push(n);
      }
    },
    { mix: 'writes' },
  );
  const s = summarise(outcome);
  const fiveHundreds = outcome.results.filter((r) => isFailure(r) && r.status !== 503).length;
  return {
    pass: fiveHundreds === 0,
    figures: `${terminated.join(' then ')} backends terminated; ${s.statuses[503] ?? 0} answered 503, ${fiveHundreds} 500 or unanswered; ${trafficFigures(outcome)}`,
  };
}

async function startWhilePoolerDown() {
  bouncer.stop();
  const instance = await newInstance('api-late', pooledDbUrl);
  const since = performance.now();
  instance.spawn();
  await sleep(8000);
  const exitedEarly = instance.child.exitCode !== null;
  bouncer.start();
  const back = performance.now();
  try {
    await instance.ready({ since, timeoutMs: 70_000 });
    const afterBack = performance.now() - back;
    const others = await Promise.all(
      pooled.map((i) =>
        i.ready({ timeoutMs: 30_000 }).then(
          () => 200,
          () => 0,
        ),
      ),
    );
    return {
      pass: !exitedEarly,
      figures: `PgBouncer down 8 s from the start; ready ${seconds(afterBack)} after it came back (${seconds(performance.now() - since)} after the start), same process; the other instances ready again: ${others.filter((s) => s === 200).length}/3`,
    };
  } finally {
    await instance.stop();
  }
}

async function slotsSpent() {
  const direct = [await newInstance('api-direct-1', directDbUrl), await newInstance('api-direct-2', directDbUrl)];
  await Promise.all(direct.map((i) => i.start()));
  const fillers = [];
  try {
    const [{ max, reserved }] = await adminQuery(
      serverUrl,
      "SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved",
    );
    const used = async () =>
      (
        await adminQuery(
          serverUrl,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'",
        )
      )[0].n - 1;
    // Other clients' connections, until 2 of the slots anyone may use are left.
    for (let free = max - reserved - (await used()); free > 2; free = max - reserved - (await used())) {
      const batch = Array.from(
        { length: Math.min(10, free - 2) },
        () => new pg.Client({ connectionString: serverUrl }),
      );
      const opened = await Promise.allSettled(batch.map((c) => c.connect()));
      batch.forEach((c, i) => (opened[i].status === 'fulfilled' ? fillers.push(c) : c.end().catch(() => undefined)));
      if (opened.some((o) => o.status === 'rejected')) break;
    }
    const left = max - reserved - (await used());
    rotation = direct;
    const outcome = await traffic.load({ rate: 20, seconds: 20 });
    rotation = [...pooled];
    const s = summarise(outcome);
    return {
      pass: s.share < 0.02,
      figures: `${fillers.length} other connections held, ${left} of ${max - reserved} non-reserved slots left (${reserved} reserved); ${(s.share * 100).toFixed(2)}% failed; ${trafficFigures(outcome)}`,
    };
  } finally {
    rotation = [...pooled];
    await Promise.all(fillers.map((c) => c.end().catch(() => undefined)));
    await Promise.all(direct.map((i) => i.stop()));
  }
}

async function sessionMode() {
  const session = await pgBouncer('session');
  try {
    const run = await cli(['migration', 'show'], settings(session.url(dbName)));
    return {
      pass: run.code === 0,
      figures: `migration show through PgBouncer in session mode: exit ${run.code} in ${seconds(run.ms)}`,
    };
  } finally {
    session.stop();
  }
}

// ---------------------------------------------------------------------------------------

async function cleanUp() {
  for (const instance of instances) if (instance.child?.exitCode === null) instance.child.kill('SIGKILL');
  for (const step of cleanups.reverse()) {
    try {
      await step();
    } catch (err) {
      console.error(`clean-up: ${err.message}`);
    }
  }
  await dropDeployData({ serverUrl, dbName, redisUrl, redisPrefix });
}
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

const began = performance.now();
console.log(`Logs in ${logDir}; ${RATE} requests a second over 3 instances through PgBouncer (transaction mode)`);
try {
  await adminQuery(serverUrl, `CREATE DATABASE "${dbName}"`);
  await scenario('a. three instances started at once on a fresh database', startTogether);
  await traffic.seed();
  await scenario('b. 5 `migration show` through the pooler under load', migrationShows);
  await scenario('c. an instance restarted under load', restartUnderLoad);
  await scenario('d. planets locked 15 s while a request reads it', lockedTable);
  let cluster;
  await scenario('e. sslmode=require, self-signed certificate', async () => {
    cluster = await tlsCluster();
    return tlsRequire(cluster);
  });
  await scenario('f. sslmode=verify-full with another CA', () =>
    cluster ? tlsWrongCa(cluster) : Promise.reject(new Error('no TLS cluster')),
  );
  await scenario('g. Redis cut 10 s under load', redisCut);
  await scenario('h. all backends terminated twice under writes', terminateUnderWrites);
  await scenario('i. a start while PgBouncer is down 8 s', startWhilePoolerDown);
  await scenario("j. PostgreSQL's slots nearly spent, 20 req/s on direct instances", slotsSpent);
  await scenario('session mode', sessionMode);
} catch (err) {
  console.error(err);
  missed = true;
} finally {
  await cleanUp();
}
console.log(`${missed ? 'A target was missed' : 'Every target met'} (${seconds(performance.now() - began)}).`);
if (existsSync(logDir)) console.log(`Instance logs: ${logDir}`);
process.exit(missed ? 1 : 0);
