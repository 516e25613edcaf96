import { DynamicModule, Inject, Logger, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { DataSource, DataSourceOptions } from 'typeorm';

import { DATABASE_UNAVAILABLE, databaseFault } from '../common/problem';
import { AppConfig } from '../config/app-config';
import { openDatabase, type OpenedDatabase } from './data-source';
import { DatabaseHealth } from './database-health';
import { refuseOtherEnvironment, stampEnvironment } from './environment-stamp';
import { runMigrationsLocked } from './migration-runner';
import { RowLockGate } from './row-lock-gate';
import { describeError, startFailure } from './start-failure';
import { UnitOfWork } from './unit-of-work';

const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/**
 * The database each configuration's application opened and has not closed yet. An
 * application whose start fails is never returned to its caller, so nobody could close it:
 * createApp closes its database through this instead (closeDatabaseOpenedWith).
 */
const openedWith = new WeakMap<AppConfig, Promise<OpenedDatabase>>();

async function closeOpened(opened: OpenedDatabase): Promise<void> {
  if (opened.dataSource.isInitialized) await opened.dataSource.destroy();
  await opened.embedded?.stop();
}

/** Closes the database that the application started with `config` opened, if it is still open. */
export async function closeDatabaseOpenedWith(config: AppConfig): Promise<void> {
  // Nest starts providers side by side: another's failure can end the start while the
  // database is still opening, so this waits for the opening to end first.
  const opening = openedWith.get(config);
  openedWith.delete(config);
  const opened = await opening?.catch(() => undefined);
  if (opened) await closeOpened(opened);
}

/**
 * Opens the database, refuses it when it is another environment's, runs the migrations
 * under a lock (refusing a schema with migrations this build does not know), stamps it with
 * this environment when `stamp` and it has none yet, and closes it all again if any fails.
 * A server (`stamp`) waits for a database that does not answer yet (see connectWhenUp).
 */
async function openAndMigrate(config: AppConfig, stamp: boolean): Promise<OpenedDatabase> {
  const logger = new Logger('Database');
  const opened = await openDatabase(config);
  try {
    if (stamp) await connectWhenUp(opened.dataSource, config, logger);
    else await opened.dataSource.initialize();
    // Before migrating: a database of the other environment is not changed at all.
    await refuseOtherEnvironment(opened.dataSource, config.API_ENVIRONMENT);
    const applied = await runMigrationsLocked(opened.dataSource, config);
    if (applied.length > 0) logger.log(`Applied migrations: ${applied.join(', ')}`);
    if (stamp && (await stampEnvironment(opened.dataSource, config.API_ENVIRONMENT))) {
      logger.log(`Stamped the database ${config.API_ENVIRONMENT}: a server or CLI of the other environment refuses it`);
    }
    logger.log(config.postgresUrl ? 'Connected to PostgreSQL' : `Embedded PostgreSQL in ${config.DATA_DIR}`);
    return opened;
  } catch (err) {
    await closeOpened(opened);
    throw startFailure(err);
  }
}

/**
 * Connects, retrying with backoff (up to 5 s apart) while the database is unavailable (down,
 * starting, refusing connections, unreachable) for up to DATABASE_CONNECT_TIMEOUT_MS, so that
 * instances started before their database (or pooler) become ready by themselves. One line
 * says it waits; anything else (a refused password, a failed certificate) ends the start at once.
 */
async function connectWhenUp(dataSource: DataSource, config: AppConfig, logger: Logger): Promise<void> {
  const deadline = Date.now() + config.DATABASE_CONNECT_TIMEOUT_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      await dataSource.initialize();
      return;
    } catch (err) {
      const left = deadline - Date.now();
      if (databaseFault(err) !== DATABASE_UNAVAILABLE || left <= 0) throw err;
      if (delay === 250) {
        logger.warn(
          `The database is unavailable (${describeError(err)}); retrying for up to ${config.DATABASE_CONNECT_TIMEOUT_MS} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    }
  }
}

const openedDatabase = (stamp: boolean): Provider => ({
  provide: OPENED_DATABASE,
  inject: [AppConfig],
  useFactory: (config: AppConfig): Promise<OpenedDatabase> => {
    const opening = openAndMigrate(config, stamp);
    openedWith.set(config, opening);
    return opening;
  },
});

class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(OPENED_DATABASE) private readonly opened: OpenedDatabase,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // Called after the HTTP server has stopped taking and finished serving requests, and
    // before TypeOrmModule's own shutdown, which then finds the DataSource destroyed: the
    // embedded database must stop after the DataSource, never before.
    openedWith.delete(this.config);
    await closeOpened(this.opened);
  }
}

/** What the options factory hands the data source factory: the DataSource, opened. */
type OpenedOptions = TypeOrmModuleOptions & { opened: OpenedDatabase };

/**
 * The database for the whole application, global. forServer: a server stamps an unstamped
 * database with its environment. forCommands: the operator CLI only checks the stamp, so that
 * a command run with the wrong settings (a sandbox's on the live database) cannot stamp it.
 */
@Module({})
export class DatabaseModule {
  static forServer(): DynamicModule {
    return databaseModule(true);
  }

  static forCommands(): DynamicModule {
    return databaseModule(false);
  }
}

function databaseModule(stamp: boolean): DynamicModule {
  return {
    module: DatabaseModule,
    global: true,
    imports: [
      // The DataSource under TypeOrmModule's token, which for the default connection is the
      // DataSource class: constructor injection and @InjectDataSource() both find it.
      // TypeOrmModule's factory only builds a DataSource from options and initializes it;
      // ours is opened beforehand (the embedded database around it, migrations under a
      // lock, both closed again on a failed start) and handed through as it is.
      // - extraProviders: the opening and its shutdown live in TypeOrmModule's own module,
      //   where its options factory can inject them, and our hook runs before its own.
      // - toRetry: never. Its default is 10 attempts 3 s apart (retryAttempts: 0 would still
      //   log a "Retrying" line); a database that is down stops the start at once, as it
      //   should for a service that an orchestrator restarts.
      TypeOrmModule.forRootAsync({
        extraProviders: [openedDatabase(stamp), DatabaseLifecycle],
        inject: [OPENED_DATABASE],
        useFactory: (opened: OpenedDatabase): OpenedOptions => ({ opened, toRetry: () => false }),
        dataSourceFactory: (options?: DataSourceOptions): Promise<DataSource> =>
          Promise.resolve((options as unknown as OpenedOptions).opened.dataSource),
      }),
    ],
    providers: [RowLockGate, UnitOfWork, DatabaseHealth],
    exports: [UnitOfWork, DatabaseHealth],
  };
}
