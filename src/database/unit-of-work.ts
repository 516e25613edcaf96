import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

import { beforeCommit } from './before-commit';
import { RowLockGate } from './row-lock-gate';

declare const OPEN_TRANSACTION: unique symbol;

/**
 * An open transaction, as a service holds it: a handle to pass on to repository methods, so
 * that what they do happens together. Only repositories see what it is (managerOf).
 */
export interface Transaction {
  readonly [OPEN_TRANSACTION]: true;
}

// The handle is the transaction's EntityManager itself: nothing to allocate per transaction.
const asTransaction = (manager: EntityManager) => manager as unknown as Transaction;

/**
 * For repositories: the EntityManager that runs a query in `tx`; without a transaction, the
 * pool's manager of `dataSource` (one statement, committed on its own).
 */
export function managerOf(tx: Transaction): EntityManager;
export function managerOf(tx: Transaction | undefined, dataSource: DataSource): EntityManager;
export function managerOf(tx: Transaction | undefined, dataSource?: DataSource): EntityManager {
  if (tx) return tx as unknown as EntityManager;
  if (!dataSource) throw new Error('managerOf: neither a transaction nor a data source');
  return dataSource.manager;
}

/**
 * How services make changes that must happen together: `work` gets one transaction and
 * hands it to every repository call that belongs to it. Committed when `work` resolves,
 * rolled back when it throws. PostgreSQL's default isolation (READ COMMITTED): where a rule
 * counts or checks rows before writing, the repository locks the parent row first. What the
 * request set with runWithBeforeCommit runs last in the same transaction.
 */
@Injectable()
export class UnitOfWork {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rowLocks: RowLockGate,
  ) {}

  run<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => workThenHook(manager, work));
  }

  /**
   * run() for a transaction that locks `row` (a name that is the same for every request
   * locking that row, e.g. `region:<id>`): requests for one row queue in this process before
   * taking a connection, and the whole wait stays within the lock timeout (RowLockGate).
   */
  runLockingRow<T>(row: string, work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.rowLocks.transaction(row, (manager) => workThenHook(manager, work));
  }
}

/** The work, then what the request asked to commit with it (runWithBeforeCommit). */
async function workThenHook<T>(manager: EntityManager, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const result = await work(asTransaction(manager));
  await beforeCommit(manager);
  return result;
}
