// What warm-pair.mjs and instructions.mjs share: the setting named on the command line, a
// database of the run's own, the service's production settings on it, and the requests that
// warm a service up as one in production has been warmed.
import { randomBytes } from 'node:crypto';

import { generateApiKey } from '../../dist/src/region-keys/api-key-codec.js';
import { productionEnv } from './service.mjs';

/**
 * The run's settings: `settings` from `NAME=value` arguments (and `label`, how to print them),
 * `path` (BENCH_PATH, the unknown path by default) and its headers, the database `dbName` on
 * DATABASE_URL's server (`serverUrl`), the service environment `base` on it with the first
 * key `key`, and `warmUp`: the other kinds of request, as [path, headers].
 */
export function settingPairRun(prefix, argv = process.argv.slice(2), env = process.env) {
  const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `${prefix}_${randomBytes(4).toString('hex')}`;
  const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
  const key = generateApiKey();
  const path = env.BENCH_PATH ?? '/no/such/route';
  return {
    settings: Object.fromEntries(argv.map((s) => s.split(/=(.*)/s).slice(0, 2))),
    label: argv.join(' ') || 'the same settings',
    path,
    pathHeaders: path === '/auth/regions/me' ? { 'x-api-key': key } : {},
    serverUrl,
    dbName,
    base: productionEnv({ databaseUrl, jwtSecret: randomBytes(32).toString('hex'), initialKey: key }),
    warmUp: [
      ['/auth/regions/me', { 'x-api-key': key }],
      ['/planets?limit=100', {}],
      ['/auth/regions/me', { 'x-api-key': 'rk_malformed' }],
      ['/health/ready', {}],
      ['/me', { authorization: 'Basic eDp5' }],
    ],
  };
}
