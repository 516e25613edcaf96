import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestDatabase } from './test-database';
import { startTestApp, TestApp } from './test-app';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of its own, so that suites sharing the Redis server never meet. */
export const uniqueRedisPrefix = (): string => `test-${randomBytes(6).toString('hex')}:`;

/** Deletes every key under `prefix`. */
export async function dropRedisKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  prefix: string;
  close(): Promise<void>;
}

/** Two apps on one database sharing rate-limit counters in Redis, as two replicas would. */
export async function twoInstancesSharingRedis(env: Record<string, string>): Promise<TwoInstances> {
  const prefix = uniqueRedisPrefix();
  const database = await createTestDatabase();
  const shared = { REDIS_URL, REDIS_KEY_PREFIX: prefix, ...env };
  const a = await startTestApp(shared, database);
  const b = await startTestApp(shared, database);
  return {
    a,
    b,
    prefix,
    close: async () => {
      await a.close();
      await b.close();
      await database.drop();
      await dropRedisKeys(prefix);
    },
  };
}
