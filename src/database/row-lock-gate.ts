import { Injectable } from '@nestjs/common';
import { E_TIMEOUT, Mutex, type MutexInterface, Semaphore, type SemaphoreInterface, withTimeout } from 'async-mutex';
import { DataSource, type EntityManager } from 'typeorm';

import { AppConfig } from '../config/app-config';

/**
 * A lock wait that outlasted the lock timeout, in this process or in PostgreSQL: the same
 * code as PostgreSQL's lock_not_available, so it is answered alike (503, Retry-After).
 */
export class LockWaitTimeoutError extends Error {
  readonly code = '55P03';
  constructor() {
    super('Waited too long for a row lock');
    this.name = 'LockWaitTimeoutError';
  }
}

// Past this many rows remembered, those nobody holds are forgotten.
const SWEEP_ABOVE = 1000;

/**
 * Keeps the transactions that lock a row (a region's, to change its keys; a planet's) from
 * emptying the connection pool while they wait for that lock. Without it, many requests
 * for one region would each hold a pooled connection while queueing on the row inside
 * PostgreSQL, and every other route of the instance would wait for a connection.
 *
 * In this process, requests for one row queue without a connection, one at a time per row
 * (the next one may open its transaction while the one before commits), and at most half
 * of the pool is used by such transactions at once. The whole wait, here
 * and then inside PostgreSQL (lock_timeout set to what is left), stays within
 * DATABASE_LOCK_TIMEOUT_MS; past it the request is refused (503) and nothing has changed.
 *
 * The embedded database is one session: no transaction ever waits for another's row lock
 * there, and its one connection already runs transactions one at a time, so the gate
 * stands aside.
 */
@Injectable()
export class RowLockGate {
  private readonly rows = new Map<string, MutexInterface>();
  private readonly connections: SemaphoreInterface;
  private readonly timeoutMs: number;
  private readonly embedded: boolean;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.embedded = !config.postgresUrl;
    this.connections = new Semaphore(Math.max(1, Math.floor(config.DATABASE_POOL_SIZE / 2)));
    this.timeoutMs = config.DATABASE_LOCK_TIMEOUT_MS;
  }

  /**
   * `dataSource.transaction(work)` for a transaction that locks `row` (any name that is the
   * same for every request locking that row), once the row is free in this process.
   *
   * The row is freed in this process when `work` ends, before the COMMIT: the next request
   * for it then opens its transaction while this one commits, and waits in PostgreSQL only
   * for that COMMIT (the row lock is PostgreSQL's until then, so it still sees every change
   * this one made). Queued one after another, requests for one row would otherwise wait
   * for a COMMIT, then for a connection, a BEGIN and the lock timeout's SET each in turn.
   */
  transaction<T>(row: string, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.embedded) return this.dataSource.transaction(work);
    return this.run(row, (lockTimeoutMs, freeRow) =>
      this.dataSource.transaction(async (manager) => {
        try {
          await manager.query("SELECT set_config('lock_timeout', $1, true)", [`${lockTimeoutMs}ms`]);
          return await work(manager);
        } finally {
          freeRow();
        }
      }),
    );
  }

  private async run<T>(row: string, work: (lockTimeoutMs: number, freeRow: () => void) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.timeoutMs;
    const mutex = this.rowMutex(row);
    const releaseRow = await before(deadline, mutex);
    let held = true;
    const freeRow = () => {
      if (!held) return;
      held = false;
      releaseRow();
      if (!mutex.isLocked()) this.rows.delete(row);
    };
    try {
      const [, releaseConnection] = await before(deadline, this.connections);
      try {
        return await work(Math.max(1, deadline - Date.now()), freeRow);
      } finally {
        releaseConnection();
      }
    } finally {
      freeRow();
    }
  }

  private rowMutex(row: string): MutexInterface {
    let mutex = this.rows.get(row);
    if (!mutex) {
      if (this.rows.size >= SWEEP_ABOVE) for (const [key, m] of this.rows) if (!m.isLocked()) this.rows.delete(key);
      mutex = new Mutex();
      this.rows.set(row, mutex);
    }
    return mutex;
  }
}

function before(deadline: number, lock: MutexInterface): Promise<MutexInterface.Releaser>;
function before(deadline: number, lock: SemaphoreInterface): Promise<[number, SemaphoreInterface.Releaser]>;
async function before(deadline: number, lock: MutexInterface | SemaphoreInterface): Promise<unknown> {
  try {
    return await withTimeout(lock as MutexInterface, Math.max(1, deadline - Date.now())).acquire();
  } catch (err) {
    throw err === E_TIMEOUT ? new LockWaitTimeoutError() : err;
  }
}
