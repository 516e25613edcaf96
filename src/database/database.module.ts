import { Global, Inject, Logger, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { DataSource, DataSourceOptions } from 'typeorm';

import { AppConfig } from '../config/app-config';
import { openDatabase, type OpenedDatabase } from './data-source';
import { DatabaseHealth } from './database-health';
import { runMigrationsLocked } from './migration-runner';
import { RowLockGate } from './row-lock-gate';
import { UnitOfWork } from './unit-of-work';

const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/** Opens the database, runs the migrations under a lock, and closes it all again if either fails. */
const openedDatabase: Provider = {
  provide: OPENED_DATABASE,
  inject: [AppConfig],
  useFactory: async (config: AppConfig): Promise<OpenedDatabase> => {
    const logger = new Logger('Database');
    const opened = await openDatabase(config);
    try {
      await opened.dataSource.initialize();
      const applied = await runMigrationsLocked(opened.dataSource);
      if (applied.length > 0) logger.log(`Applied migrations: ${applied.join(', ')}`);
      logger.log(config.DATABASE_URL ? 'Connected to PostgreSQL' : `Embedded PostgreSQL in ${config.DATA_DIR}`);
      return opened;
    } catch (err) {
      if (opened.dataSource.isInitialized) await opened.dataSource.destroy();
      await opened.embedded?.stop();
      throw err;
    }
  },
};

class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(OPENED_DATABASE) private readonly opened: OpenedDatabase) {}

  async onApplicationShutdown(): Promise<void> {
    // Called after the HTTP server has stopped taking and finished serving requests, and
    // before TypeOrmModule's own shutdown, which then finds the DataSource destroyed: the
    // embedded database must stop after the DataSource, never before.
    if (this.opened.dataSource.isInitialized) await this.opened.dataSource.destroy();
    await this.opened.embedded?.stop();
  }
}

/** What the options factory hands the data source factory: the DataSource, opened. */
type OpenedOptions = TypeOrmModuleOptions & { opened: OpenedDatabase };

@Global()
@Module({
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
      extraProviders: [openedDatabase, DatabaseLifecycle],
      inject: [OPENED_DATABASE],
      useFactory: (opened: OpenedDatabase): OpenedOptions => ({ opened, toRetry: () => false }),
      dataSourceFactory: (options?: DataSourceOptions): Promise<DataSource> =>
        Promise.resolve((options as unknown as OpenedOptions).opened.dataSource),
    }),
  ],
  providers: [RowLockGate, UnitOfWork, DatabaseHealth],
  exports: [UnitOfWork, DatabaseHealth],
})
export class DatabaseModule {}
