import { Injectable, Module, OnModuleInit } from '@nestjs/common';

import { startTestApp } from '../support/test-app';
import { createPersistentTestDatabase, TestDatabase } from '../support/test-database';

/**
 * An app that fails to start fails its test at once, with the start's own error, and leaves
 * nothing open: neither the database (which would keep the test run from ever ending) nor
 * the lock on the embedded database's directory (the next start on it would be refused).
 */

class NotProvidedAnywhere {}

@Injectable()
class NeedsWhatNobodyProvides {
  constructor(readonly missing: NotProvidedAnywhere) {}
}

@Module({ providers: [NeedsWhatNobodyProvides] })
class UnresolvableModule {}

@Injectable()
class FailsToInitialise implements OnModuleInit {
  onModuleInit(): void {
    throw new Error('refusing to start on purpose');
  }
}

@Module({ providers: [FailsToInitialise] })
class FailingInitModule {}

let database: TestDatabase;
beforeAll(async () => {
  database = await createPersistentTestDatabase();
});
afterAll(() => database.drop());

it.each([
  ['a provider Nest cannot resolve', UnresolvableModule, /can't resolve dependencies of the NeedsWhatNobodyProvides/],
  ['a module whose start-up hook throws', FailingInitModule, /refusing to start on purpose/],
])('with %s, rejects with the start-up error and releases the database', async (_, module, error) => {
  await expect(startTestApp({}, database, [module])).rejects.toThrow(error);
  // The same database opens again at once: the failed start released it.
  const next = await startTestApp({}, database);
  try {
    expect((await next.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  } finally {
    await next.close();
  }
});
