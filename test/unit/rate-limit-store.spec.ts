import { randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';

import { PrometheusScrapedGauges } from '../../src/common/metrics/scraped-gauges';
import { MemoryRateLimitStore } from '../../src/common/rate-limit/memory-rate-limit-store';
import { rateLimitStore } from '../../src/common/rate-limit/rate-limit.module';
import type { RateLimitStore } from '../../src/common/rate-limit/rate-limit-store';
import { RedisRateLimitStore } from '../../src/common/rate-limit/redis-rate-limit-store';
import { FaultProxy } from '../support/fault-proxy';

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
      await store.onModuleInit();
      expect(store.counting).toBe('redis');
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

  it('gives back exactly the hit a slot took', async () => {
    await store.increment('k11', MINUTE, 5, MINUTE, 't');
    const slot = await store.take('k11', MINUTE, 5, MINUTE, 't');
    expect(slot.totalHits).toBe(2);
    await slot.release();
    expect((await store.peek('k11', 't')).totalHits).toBe(1);
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

describe('redis rate-limit store while Redis is away', () => {
  const COMMAND_TIMEOUT_MS = 200;
  let proxy: FaultProxy;
  let store: RedisRateLimitStore;
  let prefix: string;
  let warnings: string[];
  let infos: string[];

  beforeEach(async () => {
    prefix = `test:${randomBytes(6).toString('hex')}:`;
    proxy = await FaultProxy.forUrl(REDIS_URL);
    warnings = [];
    infos = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void infos.push(String(message)));
  });
  afterEach(async () => {
    store?.onApplicationShutdown();
    await proxy.close();
    jest.restoreAllMocks();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const open = async () => {
    store = new RedisRateLimitStore(proxy.rewrite(REDIS_URL), prefix, COMMAND_TIMEOUT_MS);
    await store.onModuleInit();
    return store;
  };
  const hits = async (key: string, n: number, on = store) => {
    const counts = [];
    for (let i = 0; i < n; i++) counts.push((await on.increment(key, MINUTE, 3, MINUTE, 't')).totalHits);
    return counts;
  };
  async function until(condition: () => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition() && Date.now() < deadline) await sleep(20);
    expect(condition()).toBe(true);
  }

  it('counts in this process when Redis refuses, with one warning, and in Redis again when it is back', async () => {
    await open();
    expect(store.counting).toBe('redis');
    await proxy.setMode('refuse');
    // Through several reconnect attempts and commands, one warning.
    expect(await hits('a', 5)).toEqual([1, 2, 3, 4, 4]);
    await sleep(500);
    expect(await hits('b', 1)).toEqual([1]);
    expect(store.counting).toBe('redis-away');
    expect(warnings).toEqual([expect.stringContaining('each instance counts the rate limits on its own')]);

    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    expect(infos).toEqual([expect.stringContaining('Redis answers again')]);
    // Redis saw none of the hits counted here.
    expect(await hits('a', 1)).toEqual([1]);
    expect(warnings).toHaveLength(1);
  });

  it('starts without Redis, and counts in Redis once it comes', async () => {
    await proxy.setMode('refuse');
    await open();
    expect(store.counting).toBe('redis-away');
    expect(await hits('c', 2)).toEqual([1, 2]);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    const other = new RedisRateLimitStore(REDIS_URL, prefix, COMMAND_TIMEOUT_MS);
    try {
      await other.onModuleInit();
      await hits('d', 2);
      expect(await hits('d', 1, other)).toEqual([3]);
    } finally {
      other.onApplicationShutdown();
    }
    expect(warnings).toHaveLength(1);
  });

  it('waits for a silent Redis once, within the command timeout, then counts here at once', async () => {
    await open();
    await proxy.setMode('silent');
    let started = Date.now();
    expect(await hits('e', 1)).toEqual([1]);
    expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + 500);
    expect(Date.now() - started).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 20);
    started = Date.now();
    expect(await hits('e', 3)).toEqual([2, 3, 4]);
    expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS / 2);
    expect(warnings).toHaveLength(1);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
  });

  it('gives a hit counted here back here, and one counted in Redis back there', async () => {
    await open();
    const shared = await store.take('f', MINUTE, 3, MINUTE, 't');
    await proxy.setMode('refuse');
    await hits('g', 1);
    const local = await store.take('f', MINUTE, 3, MINUTE, 't');
    expect(local.totalHits).toBe(1);
    await local.release();
    expect((await store.peek('f', 't')).totalHits).toBe(0);
    // Redis is away: the hit stays counted there, and the release does not fail.
    await expect(shared.release()).resolves.toBeUndefined();
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    expect((await store.peek('f', 't')).totalHits).toBe(1);
  });

  it('shows the degraded state in a gauge', async () => {
    const registry = new Registry();
    const gauges = new PrometheusScrapedGauges(registry, 'region_keys_api_');
    const config = { REDIS_KEY_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: COMMAND_TIMEOUT_MS };
    const gauge = async () => (await registry.getSingleMetric('region_keys_api_redis_degraded')!.get()).values[0].value;
    await proxy.setMode('refuse');
    store = rateLimitStore({ ...config, REDIS_URL: proxy.rewrite(REDIS_URL) }, gauges) as RedisRateLimitStore;
    await store.onModuleInit();
    expect(await gauge()).toBe(1);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    expect(await gauge()).toBe(0);

    const memory = new Registry();
    rateLimitStore({ ...config, REDIS_URL: undefined }, new PrometheusScrapedGauges(memory, 'region_keys_api_'));
    expect((await memory.getSingleMetric('region_keys_api_redis_degraded')!.get()).values[0].value).toBe(0);
  });
});
