import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';

import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

import { AppConfig } from '../../config/app-config';
import { NoScrapedGauges, ScrapedGauges } from '../metrics/scraped-gauges';
import type { RateLimitPolicy } from './rate-limit-headers';

type RedisConfig = Pick<AppConfig, 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>;

/** `memory`: no REDIS_URL; `redis`: shared by every instance; `redis-away`: here, as Redis does not answer. */
export type CountingMode = 'memory' | 'redis' | 'redis-away';

export const toSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** Hashed, so that the counters (in Redis, possibly) hold no addresses or emails. */
export const counterKey = (...parts: string[]): string => createHash('sha256').update(parts.join('\n')).digest('hex');

/** Counts a hit, or throws `refuse(seconds to wait)` past the limit. */
export const takeHit = (limiter: RateLimiterAbstract, key: string, refuse: (retryAfter: number) => Error) =>
  limiter.consume(key).catch((refused: unknown) => {
    throw refused instanceof RateLimiterRes ? refuse(toSeconds(refused.msBeforeNext)) : refused;
  });

/**
 * The counters of every limit (fixed windows; the hit past the limit blocks the key a window):
 * in Redis when REDIS_URL is set, shared by every instance, else here. Redis holds counters, not
 * truth: refusing sign-ins because it is down would be worse than each instance allowing the
 * limit. So while it is not ready, each limiter counts in its in-process insurance limiter.
 */
@Injectable()
export class RateLimitStore implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly redis?: Redis;
  private warned = false;
  private closing = false;

  constructor(
    @Inject(AppConfig) private readonly config: RedisConfig,
    gauges: ScrapedGauges = new NoScrapedGauges(),
  ) {
    gauges.register(
      'redis_degraded',
      'Whether this instance counts the rate limits on its own because Redis does not answer (1), or not (0).',
      () => Promise.resolve(this.counting === 'redis-away' ? 1 : 0),
    );
    if (!config.REDIS_URL) return;
    // No offline queue and nothing resent: a command is answered or fails (and is counted
    // here) within the timeout. A socket silent that long is dropped, so later hits skip
    // Redis; reconnects go on, a second apart at most, until the ready check is answered.
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
      socketTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    // Said once an outage; without a listener ioredis would print each error itself.
    this.redis.on('error', (err: Error) => this.fallBack(err.message));
    this.redis.on('close', () => this.fallBack('the connection closed'));
    this.redis.on('ready', () => {
      if (this.warned)
        this.logger.log('Redis answers again: the rate limits are counted there, shared by every instance');
      this.warned = false;
    });
  }

  get counting(): CountingMode {
    if (!this.redis) return 'memory';
    return this.redis.status === 'ready' ? 'redis' : 'redis-away';
  }

  limiter({ name, limit, windowSeconds }: RateLimitPolicy & { windowSeconds: number }): RateLimiterAbstract {
    const options = { points: limit, duration: windowSeconds, blockDuration: windowSeconds };
    const memory = new RateLimiterMemory({ keyPrefix: name, ...options });
    if (!this.redis) return memory;
    return new RateLimiterRedis({
      ...options,
      storeClient: this.redis,
      keyPrefix: `${this.config.REDIS_KEY_PREFIX}rate-limit:${name}`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  }

  /** Gives Redis up to the command timeout to answer before the first request; then starts without it. */
  async onModuleInit(): Promise<void> {
    if (this.counting !== 'redis-away') return;
    // `once` rejects on an error event: Redis refused, no need to wait longer.
    const ms = this.config.REDIS_COMMAND_TIMEOUT_MS;
    await Promise.race([once(this.redis!, 'ready'), delay(ms)]).catch(() => undefined);
    if (this.counting === 'redis-away') this.fallBack(`no answer within ${ms} ms`);
  }

  onApplicationShutdown(): void {
    this.closing = true;
    // Not quit(): it waits for a reply, which a silent Redis never sends.
    this.redis?.disconnect();
  }

  private fallBack(reason: string): void {
    if (this.warned || this.closing || this.counting === 'redis') return;
    this.warned = true;
    this.logger.warn(
      `Redis does not answer (${reason}): each instance counts the rate limits on its own until it does`,
    );
  }
}
