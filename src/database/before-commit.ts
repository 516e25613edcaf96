import { AsyncLocalStorage } from 'node:async_hooks';

import type { EntityManager } from 'typeorm';

/**
 * Work that must commit in the same transaction as whatever a request changes, set for the
 * duration of that request's handler (common/idempotency marks its claim so). UnitOfWork
 * runs it at the end of each transaction it opens, before the COMMIT: when it throws, the
 * change is rolled back with it.
 */
export type BeforeCommit = (manager: EntityManager) => Promise<void>;

const hooks = new AsyncLocalStorage<BeforeCommit>();

export function runWithBeforeCommit<T>(hook: BeforeCommit, work: () => T): T {
  return hooks.run(hook, work);
}

export async function beforeCommit(manager: EntityManager): Promise<void> {
  const hook = hooks.getStore();
  if (hook) await hook(manager);
}
