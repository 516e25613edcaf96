import type { Transaction, UnitOfWork } from '../../src/database/unit-of-work';

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
  const label = (mock: RecordedMock) =>
    mock.mock.calls.length ? mock.getMockName() : `${mock.getMockName()} (not called)`;
  const byCallOrder = [...mocks].sort((a, b) => first(a) - first(b));
  expect(byCallOrder.map(label)).toEqual(mocks.map((mock) => mock.getMockName()));
}

export interface FakeUnitOfWork {
  unitOfWork: UnitOfWork;
  /** The transaction handed to the work: a repository call given it ran inside the transaction. */
  transaction: Transaction;
}

/**
 * `run(work)` and `runLockingRow(row, work)` run `work` at once with a transaction of its own
 * (no queue, no database), so a test can tell calls made inside a transaction from calls
 * made on the pool (without one).
 */
export function fakeUnitOfWork(): FakeUnitOfWork {
  const transaction = { name: 'transaction' } as unknown as Transaction;
  const unitOfWork = {
    run: (work: (tx: Transaction) => Promise<unknown>) => work(transaction),
    runLockingRow: (_row: string, work: (tx: Transaction) => Promise<unknown>) => work(transaction),
  } as unknown as UnitOfWork;
  return { unitOfWork, transaction };
}
