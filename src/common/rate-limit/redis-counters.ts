import { Redis } from 'ioredis';

import {
  type Counters,
  type RateLimitWindow,
  storageRecord,
  type ThrottlerStorageRecord,
  toSeconds,
} from './rate-limit-store';

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

/** What the counters' owner hears of the connection. */
export interface RedisConnectionEvents {
  /** Connected, and Redis answered the client's ready check. */
  ready(): void;
  /** The connection is lost, or a connection attempt failed; ioredis keeps retrying. */
  lost(reason: string): void;
}

/** Every instance's counters, in Redis. A command that fails or is late rejects, within the command timeout. */
export class RedisCounters implements Counters {
  private readonly redis: Redis;
  private lastError = 'the connection closed';

  constructor(
    url: string,
    private readonly keyPrefix: string,
    commandTimeoutMs: number,
    events: RedisConnectionEvents,
  ) {
    // Never wait for Redis longer than the command timeout: while disconnected a command
    // fails at once (no offline queue, nothing retried or resent later, where it would be
    // counted twice). Silent (connected, no replies): each command fails after the timeout,
    // and a socket that has not answered a command sent for twice as long is dropped and
    // reopened; without that, late replies would be matched to the wrong commands.
    // Reconnects go on for as long as the process runs, at most a second apart, so the
    // counters are shared again soon after Redis returns, also when it was away at start.
    this.redis = new Redis(url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      connectTimeout: 2000,
      commandTimeout: commandTimeoutMs,
      socketTimeout: commandTimeoutMs * 2,
    });
    // Heard here and said once by the owner, not once per reconnect; without a listener
    // ioredis would print each error itself.
    this.redis.on('error', (err: Error) => {
      this.lastError = err.message;
      events.lost(err.message);
    });
    this.redis.on('close', () => events.lost(this.lastError));
    this.redis.on('ready', () => {
      this.lastError = 'the connection closed';
      events.ready();
    });
  }

  /** Commands can be sent now (they may still go unanswered). */
  get connected(): boolean {
    return this.redis.status === 'ready';
  }

  async increment(
    ...[key, ttl, limit, blockDuration, throttlerName]: Parameters<Counters['increment']>
  ): Promise<ThrottlerStorageRecord> {
    const redisKey = this.redisKey(key, throttlerName);
    const [hits, msLeft] = (await this.redis.eval(INCREMENT, 1, redisKey, ttl, limit, blockDuration)) as [
      number,
      number,
    ];
    return storageRecord(hits, msLeft, limit);
  }

  async peek(key: string, throttlerName: string): Promise<RateLimitWindow> {
    const redisKey = this.redisKey(key, throttlerName);
    const [hits, msLeft] = await Promise.all([this.redis.get(redisKey), this.redis.pttl(redisKey)]);
    return { totalHits: Number(hits ?? 0), timeToExpire: toSeconds(msLeft) };
  }

  async release(key: string, throttlerName: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.redisKey(key, throttlerName));
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  disconnect(): void {
    this.redis.disconnect();
  }

  private redisKey(key: string, throttlerName: string): string {
    return `${this.keyPrefix}rate-limit:${throttlerName}:${key}`;
  }
}
