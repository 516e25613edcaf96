import { randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

import { PrometheusScrapedGauges } from '../../src/common/metrics/scraped-gauges';
import { RateLimitStore } from '../../src/common/rate-limit/rate-limit-store';
import { FaultProxy } from '../support/fault-proxy';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const redisConfig = (url: string | undefined, prefix: string, timeoutMs = 1000) => ({
  REDIS_URL: url,
  REDIS_KEY_PREFIX: prefix,
  REDIS_COMMAND_TIMEOUT_MS: timeoutMs,
});
const drop = async (prefix: string) => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
};

// One behaviour, two stores: the in-process one must count exactly like the shared one.
describe.each<[string, string | undefined]>([
  ['memory', undefined],
  ['redis', REDIS_URL],
])('%s rate-limit store', (_name, url) => {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  let store: RateLimitStore;
  // A hit's count, or 'refused' (with the seconds to wait) past the limit.
  const hit = (limiter: RateLimiterAbstract, key: string) =>
    limiter.consume(key).then(
      (res) => res.consumedPoints,
      (res: RateLimiterRes) => `refused ${Math.ceil(res.msBeforeNext / 1000)}`,
    );

  beforeAll(async () => {
    store = new RateLimitStore(redisConfig(url, prefix));
    await store.onModuleInit();
    expect(store.counting).toBe(url ? 'redis' : 'memory');
  });
  afterAll(async () => {
    store.onApplicationShutdown();
    if (url) await drop(prefix);
  });

  it('counts hits in a window and refuses those past the limit for a window', async () => {
    const limiter = store.limiter({ name: 'a', limit: 3, windowSeconds: 60 });
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await hit(limiter, 'k1'));
    expect(results).toEqual([1, 2, 3, 'refused 60', 'refused 60']);
  });

  it('reads without counting, and gives a hit back', async () => {
    const limiter = store.limiter({ name: 'a', limit: 5, windowSeconds: 60 });
    expect(await limiter.get('k2')).toBeNull();
    await limiter.consume('k2');
    await limiter.consume('k2');
    await limiter.reward('k2');
    expect((await limiter.get('k2'))?.consumedPoints).toBe(1);
    expect(await hit(limiter, 'k2')).toBe(2);
  });

  it('lets exactly `limit` of many concurrent hits through', async () => {
    const limiter = store.limiter({ name: 'a', limit: 10, windowSeconds: 60 });
    const results = await Promise.all(Array.from({ length: 25 }, () => hit(limiter, 'k3')));
    expect(new Set(results.filter((r) => typeof r === 'number')).size).toBe(10);
  });

  it('keeps keys and limits apart', async () => {
    await store.limiter({ name: 'b', limit: 5, windowSeconds: 60 }).consume('k4');
    expect(await hit(store.limiter({ name: 'c', limit: 5, windowSeconds: 60 }), 'k4')).toBe(1);
    expect(await hit(store.limiter({ name: 'b', limit: 5, windowSeconds: 60 }), 'k5')).toBe(1);
  });

  it('starts a new window once the old one has passed', async () => {
    const limiter = store.limiter({ name: 'd', limit: 1, windowSeconds: 1 });
    await limiter.consume('k6');
    expect(await hit(limiter, 'k6')).toBe('refused 1');
    await sleep(1100);
    expect(await hit(limiter, 'k6')).toBe(1);
  });

  (url ? it : it.skip)('shares the counts of every instance through Redis', async () => {
    const other = new RateLimitStore(redisConfig(url, prefix));
    await other.onModuleInit();
    await store.limiter({ name: 'e', limit: 5, windowSeconds: 60 }).consume('k7');
    expect(await hit(other.limiter({ name: 'e', limit: 5, windowSeconds: 60 }), 'k7')).toBe(2);
    other.onApplicationShutdown();
  });
});

describe('redis rate-limit store on a database Redis does not have', () => {
  it('counts on its own for good, says so as an error, and never writes to database 0', async () => {
    const prefix = `test:${randomBytes(6).toString('hex')}:`;
    const errors: string[] = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void errors.push(String(message)));
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const store = new RateLimitStore(redisConfig(`${REDIS_URL}/9999`, prefix, 300));
    try {
      await store.onModuleInit();
      const limiter = store.limiter({ name: 'db', limit: 3, windowSeconds: 60 });
      expect((await limiter.consume('k')).consumedPoints).toBe(1);
      await sleep(300);
      expect(store.counting).toBe('redis-away');
      expect(errors).toEqual([
        expect.stringMatching(
          /^REDIS_URL's database is not on this Redis \(.*DB index.*\): counting here until a restart$/,
        ),
      ]);
      const redis = new Redis(REDIS_URL);
      expect(await redis.keys(`${prefix}*`)).toEqual([]);
      await redis.quit();
    } finally {
      store.onApplicationShutdown();
      jest.restoreAllMocks();
    }
  });
});

describe('redis rate-limit store while Redis is away', () => {
  // Long enough that a loaded machine's scheduling delays stay well under it; the bounds below
  // tell "waited the timeout once" from "hung" or "waited once a hit", with room for load.
  const COMMAND_TIMEOUT_MS = 1000;
  const LOAD_SLACK_MS = 2000;
  let proxy: FaultProxy;
  let store: RateLimitStore;
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
    await drop(prefix);
  });

  const open = async () => {
    store = new RateLimitStore(redisConfig(proxy.rewrite(REDIS_URL), prefix, COMMAND_TIMEOUT_MS));
    await store.onModuleInit();
    return store;
  };
  // One limiter a store, as in the app: its in-process counts are its own.
  const limiters = new Map<RateLimitStore, RateLimiterAbstract>();
  const hits = async (key: string, n: number, on = store) => {
    const limiter =
      limiters.get(on) ?? limiters.set(on, on.limiter({ name: 't', limit: 3, windowSeconds: 60 })).get(on)!;
    const counts = [];
    for (let i = 0; i < n; i++) {
      counts.push(
        await limiter.consume(key).then(
          (res) => res.consumedPoints,
          (res: RateLimiterRes) => res.consumedPoints,
        ),
      );
    }
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
    expect(await hits('a', 5)).toEqual([1, 2, 3, 4, 5]);
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
    const started = Date.now();
    await open();
    expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + LOAD_SLACK_MS);
    expect(store.counting).toBe('redis-away');
    expect(await hits('c', 2)).toEqual([1, 2]);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    const other = new RateLimitStore(redisConfig(REDIS_URL, prefix, COMMAND_TIMEOUT_MS));
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
    expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + LOAD_SLACK_MS);
    expect(Date.now() - started).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 20);
    started = Date.now();
    expect(await hits('e', 3)).toEqual([2, 3, 4]);
    // Had any of the three waited, they would take the timeout at least.
    expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS);
    expect(warnings).toHaveLength(1);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    expect(await hits('e', 1)).toEqual([1]);
  });

  it('stays on Redis once it is back, even when the connection dropped with a command unanswered', async () => {
    await open();
    await proxy.setMode('silent');
    const unanswered = hits('f', 1);
    await sleep(COMMAND_TIMEOUT_MS / 4);
    // Reset, then back at once: the client is ready again before that command's timeout.
    await proxy.setMode('refuse');
    await proxy.setMode('forward');
    expect(await unanswered).toEqual([1]);
    await until(() => store.counting === 'redis');
    await sleep(COMMAND_TIMEOUT_MS * 2);
    expect(store.counting).toBe('redis');
    expect(await hits('f', 1)).toEqual([1]);
    expect({ warnings: warnings.length, infos: infos.length }).toEqual({ warnings: 1, infos: 1 });
  });

  it('shows the degraded state in a gauge', async () => {
    const registry = new Registry();
    const gauges = new PrometheusScrapedGauges(registry, 'region_keys_api_');
    const gauge = async () => (await registry.getSingleMetric('region_keys_api_redis_degraded')!.get()).values[0].value;
    await proxy.setMode('refuse');
    store = new RateLimitStore(redisConfig(proxy.rewrite(REDIS_URL), prefix, COMMAND_TIMEOUT_MS), gauges);
    await store.onModuleInit();
    expect(await gauge()).toBe(1);
    await proxy.setMode('forward');
    await until(() => store.counting === 'redis');
    expect(await gauge()).toBe(0);

    const memory = new Registry();
    new RateLimitStore(redisConfig(undefined, prefix), new PrometheusScrapedGauges(memory, 'region_keys_api_'));
    expect((await memory.getSingleMetric('region_keys_api_redis_degraded')!.get()).values[0].value).toBe(0);
  });
});
