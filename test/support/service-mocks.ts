import type { DataSource, EntityManager } from 'typeorm';
import type { RowLockGate } from '../../src/database/row-lock-gate';

/**
 * A stand-in for a repository: every method of the class is a fresh, typed `jest.fn()` for
 * the test to arrange. Written here rather than taken from a mocking package because Jest's
 * own automock works per module and shares its mocks between tests through the prototype,
 * and a Proxy-based mock would also answer methods the repository does not have.
 */
export function automock<T extends object>(Class: abstract new (...args: never[]) => T): jest.Mocked<T> {
  const mock: Record<string, jest.Mock> = {};
  for (const name of Object.getOwnPropertyNames(Class.prototype)) {
    if (name !== 'constructor') mock[name] = jest.fn().mockName(name);
  }
  return mock as jest.Mocked<T>;
}

/** What expectCalledInOrder reads of a mock, whatever its signature. */
interface RecordedMock {
  mock: { calls: unknown[]; invocationCallOrder: number[] };
  getMockName(): string;
}

/** Asserts that each mock was first called after the one before it (e.g. lock, then count). */
export function expectCalledInOrder(...mocks: RecordedMock[]): void {
  const first = (mock: RecordedMock) => mock.mock.invocationCallOrder[0] ?? Infinity;
  const label = (mock: RecordedMock) => (mock.mock.calls.length ? mock.getMockName() : `${mock.getMockName()} (not called)`);
  const byCallOrder = [...mocks].sort((a, b) => first(a) - first(b));
  expect(byCallOrder.map(label)).toEqual(mocks.map((mock) => mock.getMockName()));
}

export interface FakeDataSource {
  dataSource: DataSource;
  /** The manager handed to the transaction's callback: a repository call given it ran inside the transaction. */
  transactionManager: EntityManager;
  transaction: jest.Mock;
}

/**
 * `transaction(work)` runs `work` with a manager of its own, so a test can tell calls made
 * inside a transaction from calls made on the pool (`dataSource.manager`).
 */
export function fakeDataSource(): FakeDataSource {
  const transactionManager = { name: 'transaction' } as unknown as EntityManager;
  const transaction = jest.fn((work: (manager: EntityManager) => Promise<unknown>) => work(transactionManager));
  const dataSource = { transaction, manager: { name: 'pool' } } as unknown as DataSource;
  return { dataSource, transactionManager, transaction };
}

/** RowLockGate without the per-process queue: each transaction goes straight to the data source. */
export function passThroughRowLocks(dataSource: DataSource): RowLockGate {
  return { transaction: (_row: string, work: (manager: EntityManager) => Promise<unknown>) => dataSource.transaction(work) } as unknown as RowLockGate;
}
