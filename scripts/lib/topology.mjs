// The pieces of a local deploy the topology scripts (roll.mjs, pooler.mjs) set up: instances
// of the built dist/ started as `npm run serve` starts it, TCP proxies that can be cut, and
// administrator queries on the PostgreSQL server.
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serveCommand } from '../../bench/lib/service.mjs';

/** Runs `sql` on a connection of its own to `url`; resolves to the rows. */
export async function adminQuery(url, sql, params = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Drops a deploy's database (on the server at `serverUrl`) and its Redis keys. */
export async function dropDeployData({ serverUrl, dbName, redisUrl, redisPrefix }) {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const stale = await redis.keys(`${redisPrefix}*`);
    if (stale.length) await redis.del(...stale);
  } finally {
    redis.disconnect();
  }
}

/** `url` with another database name. */
export function onDatabase(url, name) {
  const other = new URL(url);
  other.pathname = `/${name}`;
  return other.href;
}

const DEFAULT_PORTS = { 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379 };

/**
 * A TCP proxy to `target` (a URL of PostgreSQL or Redis) that can be cut (open connections reset, new
 * ones refused) and restored. It runs in a thread of its own, so that the load this process
 * sends never slows the traffic it carries.
 */
export async function cuttableProxy(target) {
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
    {
      eval: true,
      workerData: { host: target.hostname, port: Number(target.port || DEFAULT_PORTS[target.protocol]) },
    },
  );
  const reply = () => new Promise((resolve) => worker.once('message', resolve));
  const port = await reply();
  return {
    port,
    /** `url` (a database's or Redis's) with this proxy's address. */
    rewrite: (url) => Object.assign(new URL(url), { hostname: '127.0.0.1', port: String(port) }).href,
    cut: () => (worker.postMessage('cut'), reply()),
    restore: () => (worker.postMessage(port), reply()),
    close: () => worker.terminate(),
  };
}

/** HTTP status of `url`, or 0 when nothing answers. */
export const statusOf = (url) =>
  fetch(url).then(
    async (res) => (await res.arrayBuffer(), res.status),
    () => 0,
  );

/**
 * An instance of the built service on `port`, as `npm run serve` starts it, with `env` (its
 * whole environment besides PATH and PORT), its output appended to `<logDir>/<name>.log`.
 */
export function serviceInstance({ name, port, env, logDir }) {
  const serve = serveCommand('.');
  const instance = {
    name,
    port,
    env,
    url: `http://127.0.0.1:${port}`,
    log: join(logDir, `${name}.log`),
    child: null,
    exited: null,
    /** Spawns it; resolves at once (see ready()). */
    spawn() {
      const out = openSync(instance.log, 'a');
      instance.child = spawn(process.execPath, [...serve.flags, 'dist/src/main.js'], {
        env: { PATH: process.env.PATH, ...serve.env, ...instance.env, PORT: String(port) },
        stdio: ['ignore', out, out],
      });
      instance.exited = new Promise((resolve) => instance.child.once('exit', resolve));
    },
    /** Resolves once /health/ready answers 200 (ms since `since`); throws if it exits or takes longer than `timeoutMs`. */
    async ready({ since = performance.now(), timeoutMs = 180_000 } = {}) {
      // Generous: on a busy machine a start can take most of a minute.
      while (performance.now() - since < timeoutMs) {
        if ((await statusOf(`${instance.url}/health/ready`)) === 200) return performance.now() - since;
        if (instance.child.exitCode !== null) break;
        await sleep(100);
      }
      throw new Error(`${name} did not become ready; see ${instance.log}`);
    },
    /** Spawns it and waits until it is ready; resolves to how long that took (ms). */
    async start() {
      const since = performance.now();
      instance.spawn();
      return instance.ready({ since });
    },
    async stop(signal = 'SIGTERM') {
      if (instance.child?.exitCode === null) instance.child.kill(signal);
      await instance.exited;
    },
  };
  return instance;
}
