import { DataSource, MigrationExecutor, type QueryRunner } from 'typeorm';

import type { AppConfig } from '../config/app-config';
import { ADVISORY_LOCKS } from './advisory-locks';

/** The database holds migrations this build does not have: a newer build migrated it. */
export class UnknownMigrationsError extends Error {
  constructor(readonly names: string[]) {
    super(
      `The database has migrations this build does not know: ${names.join(', ')}. A newer build migrated it: ` +
        'run that build, or revert them with its `migration revert` before starting this one.',
    );
    this.name = 'UnknownMigrationsError';
  }
}

export interface MigrationStatus {
  /** In the order they were applied: `migration revert` takes back the last one. */
  applied: string[];
  pending: string[];
  /** Applied to the database, and not in this build. */
  unknown: string[];
}

type LockSettings = Pick<AppConfig, 'DATABASE_CONNECT_TIMEOUT_MS' | 'DATABASE_LOCK_TIMEOUT_MS'>;

/**
 * Runs `work` in one transaction that holds the migrations' PostgreSQL advisory lock until it
 * ends, so that instances (and the CLI) never change the schema at the same time: the others
 * wait, then find nothing to do. The lock is transaction-scoped: a transaction pooler cannot
 * leave it held on a connection it hands to someone else, and a failure releases it with the
 * rollback. Pending migrations are applied all or none. Migrations have no statement
 * timeout (a large one may take long); their lock waits keep the service's.
 */
async function underMigrationLock<T>(
  dataSource: DataSource,
  settings: LockSettings,
  work: (executor: MigrationExecutor) => Promise<T>,
): Promise<T> {
  const queryRunner: QueryRunner = dataSource.createQueryRunner();
  await queryRunner.connect();
  try {
    await queryRunner.startTransaction();
    try {
      await queryRunner.query(
        "SELECT set_config('statement_timeout', '0', true), set_config('lock_timeout', $1, true)",
        [
          // Another instance migrating: wait as long as a start waits for the database.
          `${Math.max(settings.DATABASE_CONNECT_TIMEOUT_MS, settings.DATABASE_LOCK_TIMEOUT_MS)}ms`,
        ],
      );
      await queryRunner.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.migrations]);
      await queryRunner.query("SELECT set_config('lock_timeout', $1, true)", [
        `${settings.DATABASE_LOCK_TIMEOUT_MS}ms`,
      ]);
      const executor = new MigrationExecutor(dataSource, queryRunner);
      // Inside this transaction: 'all' starts none of its own.
      executor.transaction = 'all';
      const result = await work(executor);
      await queryRunner.commitTransaction();
      return result;
    } catch (err) {
      if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => undefined);
      throw err;
    }
  } finally {
    await queryRunner.release();
  }
}

const timestampOf = (name: string): number => Number(/\d{13}$/.exec(name)?.[0] ?? 0);

async function statusOf(dataSource: DataSource, executor: MigrationExecutor): Promise<MigrationStatus> {
  // In the order TypeORM runs them: by the timestamp that ends each name.
  const known = dataSource.migrations
    .map((migration) => migration.name ?? migration.constructor.name)
    .sort((a, b) => timestampOf(a) - timestampOf(b));
  // Newest first, as TypeORM reads them (by id).
  const executed = (await executor.getExecutedMigrations()).map((migration) => migration.name).reverse();
  return {
    applied: executed.filter((name) => known.includes(name)),
    pending: known.filter((name) => !executed.includes(name)),
    unknown: executed.filter((name) => !known.includes(name)),
  };
}

/** Which migrations are applied, pending, and applied but not in this build; changes nothing. */
export function migrationStatus(dataSource: DataSource, settings: LockSettings): Promise<MigrationStatus> {
  return underMigrationLock(dataSource, settings, (executor) => statusOf(dataSource, executor));
}

/**
 * Runs the pending migrations under the lock and returns their names. Refuses, before running
 * any, a database that holds migrations this build does not know: its code would run on a
 * schema it was not written for.
 */
export function runMigrationsLocked(dataSource: DataSource, settings: LockSettings): Promise<string[]> {
  return underMigrationLock(dataSource, settings, async (executor) => {
    const { unknown } = await statusOf(dataSource, executor);
    if (unknown.length > 0) throw new UnknownMigrationsError(unknown);
    const applied = await executor.executePendingMigrations();
    return applied.map((m) => m.name);
  });
}

/** Reverts the newest applied migration under the lock; returns its name, or null when none is applied. */
export function revertLastMigrationLocked(dataSource: DataSource, settings: LockSettings): Promise<string | null> {
  return underMigrationLock(dataSource, settings, async (executor) => {
    const { applied, unknown } = await statusOf(dataSource, executor);
    if (unknown.length > 0) throw new UnknownMigrationsError(unknown);
    const newest = applied.at(-1);
    if (newest === undefined) return null;
    await executor.undoLastMigration();
    return newest;
  });
}
