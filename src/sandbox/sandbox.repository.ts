import { Injectable } from '@nestjs/common';

import type { ApiEnvironment } from '../common/auth';
import { ADVISORY_LOCKS, environmentStampOf, managerOf, type Transaction } from '../database';

@Injectable()
export class SandboxRepository {
  /**
   * Waits for migrations another instance is running (they hold their lock for the whole run)
   * and for another reset, then holds both until the transaction ends.
   */
  async lockForReset(tx: Transaction): Promise<void> {
    await managerOf(tx).query('SELECT pg_advisory_xact_lock($1), pg_advisory_xact_lock($2)', [
      ADVISORY_LOCKS.migrations,
      ADVISORY_LOCKS.sandboxReset,
    ]);
  }

  /** The environment the database is stamped for (null: not stamped yet). */
  environmentStamp(tx: Transaction): Promise<ApiEnvironment | null> {
    return environmentStampOf(managerOf(tx));
  }

  /**
   * Empties every table that holds an entity, in one statement, ids restarted; the
   * migrations table is no entity's and stays. Taken from the entity metadata, so a table a
   * feature adds later is emptied too. Waits for the transactions running on those tables
   * (up to the lock timeout), and holds them off until the reset commits.
   */
  async emptyDataTables(tx: Transaction): Promise<string[]> {
    const manager = managerOf(tx);
    const tables = [...new Set(manager.connection.entityMetadatas.map((entity) => entity.tablePath))].sort();
    const quoted = tables.map((table) =>
      table
        .split('.')
        .map((part) => `"${part.replace(/"/g, '""')}"`)
        .join('.'),
    );
    await manager.query(`TRUNCATE ${quoted.join(', ')} RESTART IDENTITY CASCADE`);
    return tables;
  }
}
