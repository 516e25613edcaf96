import { DataSource, DataSourceOptions } from 'typeorm';

import type { AppConfig } from '../config/app-config';
import { EmbeddedPostgres } from './embedded-postgres';
import { defaultApplicationName, pooledDriver } from './pooled-connections';
import { ENTITIES, MIGRATIONS } from './schema-files';

export interface OpenedDatabase {
  dataSource: DataSource;
  /** Present when the data lives in the embedded database; stopped after the DataSource. */
  embedded?: EmbeddedPostgres;
}

type DatabaseConfig = Pick<
  AppConfig,
  | 'postgresUrl'
  | 'DATA_DIR'
  | 'DATABASE_POOL_SIZE'
  | 'DATABASE_STATEMENT_TIMEOUT_MS'
  | 'DATABASE_LOCK_TIMEOUT_MS'
  | 'DATABASE_ACQUIRE_TIMEOUT_MS'
  | 'DATABASE_APPLICATION_NAME'
>;

/**
 * How much longer than statement_timeout the client waits for an answer. In a transaction the
 * server cancels a slow statement itself, and this leaves time for its error to arrive first;
 * outside one, and when the server or the network has gone silent, the client cancels.
 */
export const QUERY_TIMEOUT_MARGIN_MS = 500;

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

/**
 * DATABASE_URL with `sslmode` meaning what it means to libpq (node-postgres reads `require`
 * as full verification unless told otherwise): `require` encrypts without verifying,
 * `verify-ca` checks the chain against `sslrootcert`, `verify-full` the host name too.
 * Throws, naming the setting, for what libpq would refuse.
 */
export function withLibpqSslModes(url: string): string {
  if (!url.includes('sslmode=')) return url;
  // What WHATWG's parser refuses, node-postgres may still read: left to it as it is.
  const parsed = URL.parse(url);
  if (!parsed) return url;
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null) return url;
  if (!SSL_MODES.includes(mode)) {
    throw new Error(`DATABASE_URL: sslmode=${mode} is not one of ${SSL_MODES.join(', ')}`);
  }
  if (mode === 'verify-ca' && !parsed.searchParams.get('sslrootcert')) {
    throw new Error('DATABASE_URL: sslmode=verify-ca needs sslrootcert=<path of the CA certificate file>');
  }
  if (parsed.searchParams.has('uselibpqcompat')) return url;
  parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}

/**
 * Builds the TypeORM DataSource for PostgreSQL: the server at DATABASE_URL, or the
 * embedded one in DATA_DIR. Schema changes come only from migrations.
 */
export async function openDatabase(config: DatabaseConfig): Promise<OpenedDatabase> {
  const common = {
    type: 'postgres',
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
  } as const;

  if (config.postgresUrl) {
    const options: DataSourceOptions = {
      ...common,
      url: withLibpqSslModes(config.postgresUrl),
      poolSize: config.DATABASE_POOL_SIZE,
      // The timeouts travel with each transaction (see pooled-connections.ts), so that they
      // hold through a transaction pooler: a stuck lock or a runaway query fails the
      // request instead of hanging it.
      driver: pooledDriver({
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
        replyMarginMs: QUERY_TIMEOUT_MARGIN_MS,
      }),
      applicationName: config.DATABASE_APPLICATION_NAME ?? defaultApplicationName(),
      extra: {
        // Opening a connection, or waiting for a pooled one to come free.
        connectionTimeoutMillis: config.DATABASE_ACQUIRE_TIMEOUT_MS,
        // A peer that vanished without closing (a dead host) is found by TCP keep-alive.
        keepAlive: true,
      },
    };
    return { dataSource: new DataSource(options) };
  }

  const embedded = await EmbeddedPostgres.start(config.DATA_DIR);
  // One connection: PGlite is a single session, and the pool is what serialises
  // transactions on it (see EmbeddedPostgres). Timeouts do not apply: nothing can wait
  // on a lock held by another session when there is no other session.
  const options: DataSourceOptions = { ...common, ...embedded.connection, poolSize: 1 };
  return { dataSource: new DataSource(options), embedded };
}
