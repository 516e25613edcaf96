import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { openDatabase, type OpenedDatabase } from './data-source';
import { runMigrationsLocked } from './migration-runner';
import { RowLockGate } from './row-lock-gate';

const OPENED_DATABASE = Symbol('OPENED_DATABASE');

class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(OPENED_DATABASE) private readonly opened: OpenedDatabase) {}

  async onApplicationShutdown(): Promise<void> {
    // Called after the HTTP server has stopped taking and finished serving requests.
    if (this.opened.dataSource.isInitialized) await this.opened.dataSource.destroy();
    await this.opened.embedded?.stop();
  }
}

@Global()
@Module({
  providers: [
    {
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
    },
    {
      provide: DataSource,
      inject: [OPENED_DATABASE],
      useFactory: (opened: OpenedDatabase) => opened.dataSource,
    },
    DatabaseLifecycle,
    RowLockGate,
  ],
  exports: [DataSource, RowLockGate],
})
export class DatabaseModule {}
