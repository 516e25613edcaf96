// The built service as the benchmarks start and drive it: as `npm start` starts it, in
// production mode, on this machine's PostgreSQL and Redis.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSeconds, startNode } from './processes.mjs';

/** The service's settings, as production would have them, on `databaseUrl` (Redis keys under the database's name). */
export const productionEnv = ({ databaseUrl, jwtSecret, initialKey }) => ({
  NODE_ENV: 'production',
  JWT_SECRET: jwtSecret,
  DATABASE_URL: databaseUrl,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
  LOG_LEVEL: 'warn',
  INITIAL_REGION_API_KEY: initialKey,
  SEED_SAMPLE_DATA: 'false',
  // The load comes from one key: its rate limit is counted on every request (one Redis EVAL each)
  // but set above what the load reaches, so that nothing is refused.
  REGION_KEY_RATE_LIMIT: '100000/1',
});

/**
 * How a checkout's `npm run serve` starts the server: `[NAME=value ...] node <flags>
 * dist/src/main.js`, as { env, flags } (the environment it sets and Node's flags); nothing
 * of either without that script.
 */
export function serveCommand(root) {
  const { serve = 'node dist/src/main.js' } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
  const words = serve.split(/\s+/);
  const node = words.indexOf('node');
  const env = Object.fromEntries(words.slice(0, node).map((word) => word.split('=')));
  return { env, flags: words.slice(node + 1, -1) };
}

/**
 * Starts `script` (a path in the checkout at `root`; the service by default) as that
 * checkout's `npm run serve` starts the service: with its variables and Node's flags, then
 * `env` (which wins) and `nodeArgs` (which come first). The other options are startNode's.
 */
export function startServed(root, { script = 'dist/src/main.js', env = {}, nodeArgs = [], ...options } = {}) {
  const serve = serveCommand(root);
  return startNode({
    ...options,
    args: [...nodeArgs, ...serve.flags, join(root, script)],
    env: { ...serve.env, ...env },
  });
}

/**
 * One load measurement (`load.run(spec)`) of a server, with its CPU time per request
 * (cpuUs), which other work on a shared machine disturbs far less than req/s.
 */
export async function measure(load, server, spec) {
  const before = cpuSeconds(server.child.pid);
  const result = await load.run(spec);
  return { ...result, cpuUs: ((cpuSeconds(server.child.pid) - before) * 1e6) / result.requests };
}

/**
 * Makes the database on `env`'s DATABASE_URL (migrations, and the region of
 * INITIAL_REGION_API_KEY) with a service started for it and stopped again; resolves to that
 * service's start-up time. The services measured next start on a made database, as every
 * instance of a deploy but the one that migrates does. The process that ran the migrations
 * can stay slower per request for as long as it lives, so measuring it would measure its
 * history, not the code.
 */
export async function makeDatabase(root, env) {
  const maker = await startServed(root, { env });
  await maker.stop();
  return maker.startupMs;
}
