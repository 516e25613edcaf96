import { DataSource, MigrationExecutor } from 'typeorm';

import { ADVISORY_LOCKS } from './advisory-locks';

/**
 * Runs pending migrations while holding a PostgreSQL advisory lock, so that instances
 * starting together apply each migration once: the others wait, then find nothing to do.
 * Everything runs on one connection, which also keeps the one-connection embedded
 * database from waiting on itself.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const queryRunner = dataSource.createQueryRunner();
  await queryRunner.connect();
  try {
    await queryRunner.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.migrations]);
    try {
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'each';
      const applied = await executor.executePendingMigrations();
      return applied.map((m) => m.name);
    } finally {
      await queryRunner.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCKS.migrations]);
    }
  } finally {
    await queryRunner.release();
  }
}
