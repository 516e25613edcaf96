import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';

import { MemoryRateLimitStore } from '../../src/common/rate-limit/memory-rate-limit-store';
import type { RateLimitStore } from '../../src/common/rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../../src/common/rate-limit/redis-rate-limit-store';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface OpenStore {
  store: RateLimitStore;
  close: () => Promise<void>;
}

// One behaviour, two stores: the in-process one must count exactly like the shared one.
describe.each<[string, () => Promise<OpenStore>]>([
  ['memory', () => Promise.resolve({ store: new MemoryRateLimitStore(), close: () => Promise.resolve() })],
  [
    'redis',
    async () => {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const store = new RedisRateLimitStore(REDIS_URL, prefix);
      return {
        store,
        close: async () => {
          const redis = new Redis(REDIS_URL);
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          await redis.quit();
          store.onApplicationShutdown();
        },
      };
    },
  ],
])('%s rate-limit store', (_name, open) => {
  let store: RateLimitStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ store, close } = await open());
  });
  afterAll(async () => close());

  it('counts hits in a window and blocks the one past the limit', async () => {
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await store.increment('k1', MINUTE, 3, MINUTE, 't'));
    expect(results.map((r) => [r.totalHits, r.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(results[0].timeToExpire).toBeGreaterThan(0);
    expect(results[0].timeToExpire).toBeLessThanOrEqual(60);
    expect(results[3].timeToBlockExpire).toBeGreaterThan(0);
    expect(results[3].timeToBlockExpire).toBeLessThanOrEqual(60);
  });

  it('does not count hits while blocked', async () => {
    const hits = [];
    for (let i = 0; i < 4; i++) hits.push((await store.increment('k2', MINUTE, 1, MINUTE, 't')).totalHits);
    expect(hits).toEqual([1, 2, 2, 2]);
  });

  it('peeks without counting', async () => {
    expect(await store.peek('k10', 't')).toEqual({ totalHits: 0, timeToExpire: 0 });
    await store.increment('k10', MINUTE, 5, MINUTE, 't');
    await store.peek('k10', 't');
    const window = await store.peek('k10', 't');
    expect(window.totalHits).toBe(1);
    expect(window.timeToExpire).toBeGreaterThan(0);
  });

  it('releases one hit of the current window, never going below zero', async () => {
    await store.increment('k3', MINUTE, 5, MINUTE, 't');
    await store.increment('k3', MINUTE, 5, MINUTE, 't');
    await store.release('k3', 't');
    expect((await store.increment('k3', MINUTE, 5, MINUTE, 't')).totalHits).toBe(2);
    for (let i = 0; i < 4; i++) await store.release('k3', 't');
    await store.release('never-hit', 't');
    expect((await store.increment('k3', MINUTE, 5, MINUTE, 't')).totalHits).toBe(1);
    expect((await store.increment('never-hit', MINUTE, 5, MINUTE, 't')).totalHits).toBe(1);
  });

  it('keeps the end of the window when a hit is released', async () => {
    await store.increment('k8', 1500, 5, 1500, 't');
    await store.release('k8', 't');
    // Still the 1.5-second window, not a new one of a minute.
    expect((await store.increment('k8', MINUTE, 5, MINUTE, 't')).timeToExpire).toBeLessThanOrEqual(2);
  });

  it('lets a released hit be taken again at once by concurrent hits, and no more', async () => {
    await Promise.all(Array.from({ length: 3 }, () => store.increment('k9', MINUTE, 3, MINUTE, 't')));
    await store.release('k9', 't');
    const results = await Promise.all(Array.from({ length: 5 }, () => store.increment('k9', MINUTE, 3, MINUTE, 't')));
    expect(results.filter((r) => !r.isBlocked)).toHaveLength(1);
  });

  it('keeps keys and throttler names apart', async () => {
    await store.increment('k4', MINUTE, 5, MINUTE, 'a');
    await store.increment('k4', MINUTE, 5, MINUTE, 'a');
    expect((await store.increment('k4', MINUTE, 5, MINUTE, 'b')).totalHits).toBe(1);
    expect((await store.increment('k5', MINUTE, 5, MINUTE, 'a')).totalHits).toBe(1);
  });

  it('starts a new window once the old one has passed', async () => {
    await store.increment('k6', 20, 1, 20, 't');
    await store.increment('k6', 20, 1, 20, 't');
    await sleep(120);
    const next = await store.increment('k6', MINUTE, 1, MINUTE, 't');
    expect(next).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('lets exactly `limit` of many concurrent hits through', async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => store.increment('k7', MINUTE, 10, MINUTE, 't')));
    expect(results.filter((r) => !r.isBlocked)).toHaveLength(10);
    expect(new Set(results.filter((r) => !r.isBlocked).map((r) => r.totalHits)).size).toBe(10);
  });
});

describe('memory rate-limit store', () => {
  it('stays within its size', async () => {
    const store = new MemoryRateLimitStore(3);
    for (const key of ['a', 'b', 'c', 'd']) await store.increment(key, MINUTE, 5, MINUTE, 't');
    expect((await store.increment('d', MINUTE, 5, MINUTE, 't')).totalHits).toBe(2);
    expect((await store.increment('a', MINUTE, 5, MINUTE, 't')).totalHits).toBe(1);
  });
});
