import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';

import { RateLimitStore, RateLimitWindow, storageRecord, ThrottlerStorageRecord, toSeconds } from './rate-limit-store';
import { SignInUnavailableError } from './too-many-requests.error';

// One round trip, atomic: instances racing on one key each see a distinct count.
// A key past its limit is blocked and further hits are not counted (nor extend the block).
const INCREMENT = `
local limit = tonumber(ARGV[2])
local hits = tonumber(redis.call('GET', KEYS[1]) or '0')
if hits > limit then
  return { hits, redis.call('PTTL', KEYS[1]) }
end
hits = redis.call('INCR', KEYS[1])
if hits > limit then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return { hits, tonumber(ARGV[3]) }
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return { hits, left }
`;

// Never below zero, and the key keeps its expiry (DECR does not touch it).
const RELEASE = `
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
`;

/** Counters shared by every instance through Redis (REDIS_URL). */
export class RedisRateLimitStore implements RateLimitStore, OnApplicationShutdown {
  private readonly logger = new Logger(RedisRateLimitStore.name);
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly keyPrefix: string,
    commandTimeoutMs = 1000,
  ) {
    // Hanging every sign-in while Redis is away would be worse than a 503. Down: one
    // reconnect attempt, then the command fails. Silent (connected, no replies): each
    // command fails after commandTimeout, and a socket that has not answered a command
    // sent for twice as long is dropped and reopened, so the client recovers when Redis
    // does; without that, replies arriving later would be matched to the wrong commands.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: commandTimeoutMs,
      socketTimeout: commandTimeoutMs * 2,
      lazyConnect: false,
    });
    this.redis.on('error', (err: Error) => this.logger.warn(`Redis: ${err.message}`));
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const [hits, msLeft] = (await this.run(() =>
      this.redis.eval(INCREMENT, 1, this.redisKey(key, throttlerName), ttl, limit, blockDuration),
    )) as [number, number];
    return storageRecord(hits, msLeft, limit);
  }

  async peek(key: string, throttlerName: string): Promise<RateLimitWindow> {
    const redisKey = this.redisKey(key, throttlerName);
    const [hits, msLeft] = await this.run(() => Promise.all([this.redis.get(redisKey), this.redis.pttl(redisKey)]));
    return { totalHits: Number(hits ?? 0), timeToExpire: toSeconds(msLeft) };
  }

  async release(key: string, throttlerName: string): Promise<void> {
    await this.run(() => this.redis.eval(RELEASE, 1, this.redisKey(key, throttlerName)));
  }

  readonly backend = 'redis';

  async isReachable(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  onApplicationShutdown(): void {
    // Not quit(): it waits for Redis's reply, which a silent Redis never sends. Every
    // command has had its answer by now (requests are finished), so nothing is lost.
    this.redis.disconnect();
  }

  private redisKey(key: string, throttlerName: string): string {
    return `${this.keyPrefix}rate-limit:${throttlerName}:${key}`;
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      // Fail closed: without counters, sign-in would be open to unlimited guessing.
      this.logger.error(`Rate-limit counters unavailable: ${(err as Error).message}`);
      throw new SignInUnavailableError();
    }
  }
}
