import { DataSource, DataSourceOptions } from 'typeorm';

import type { AppConfig } from '../config/app-config';
import { DiscardBrokenConnections } from './discard-broken-connections';
import { EmbeddedPostgres } from './embedded-postgres';
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
  | 'DATABASE_CONNECT_TIMEOUT_MS'
>;

/**
 * How much longer than statement_timeout the client waits for an answer. The server cancels
 * a slow statement itself; this only ends the wait when the server or the network has gone
 * silent, and leaves time for the server's own error to arrive first.
 */
export const QUERY_TIMEOUT_MARGIN_MS = 1000;

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
      subscribers: [DiscardBrokenConnections],
      url: config.postgresUrl,
      poolSize: config.DATABASE_POOL_SIZE,
      extra: {
        // Sent as startup parameters, so they hold for every connection in the pool:
        // a stuck lock or a runaway query fails the request instead of hanging it.
        statement_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS,
        lock_timeout: config.DATABASE_LOCK_TIMEOUT_MS,
        idle_in_transaction_session_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS * 2,
        // The client's own limits, for a server or network that stops answering: opening a
        // connection (or waiting for a free one in the pool), and waiting for a reply.
        connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS,
        query_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS,
        // A peer that vanished without closing (a dead host) is found by TCP keep-alive.
        keepAlive: true,
        application_name: 'region-keys-api',
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
