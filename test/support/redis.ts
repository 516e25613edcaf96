import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';

import { type TwoApps, twoInstances } from './test-app';

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

export interface TwoInstances extends TwoApps {
  prefix: string;
}

/** Two apps on one database sharing rate-limit counters in Redis, as two replicas would. */
export async function twoInstancesSharingRedis(env: Record<string, string>): Promise<TwoInstances> {
  const prefix = uniqueRedisPrefix();
  const apps = await twoInstances({ REDIS_URL, REDIS_KEY_PREFIX: prefix, ...env });
  return {
    ...apps,
    prefix,
    close: async () => {
      await apps.close();
      await dropRedisKeys(prefix);
    },
  };
}
