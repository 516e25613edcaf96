import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';

import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  type IRateLimiterOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';

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

/** The in-process limiter a Redis limiter counts in when Redis does not take a command; it tells `missed` so. */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    options: IRateLimiterOptions,
    private readonly missed: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.missed();
    return super.consume(...args);
  }

  override get(...args: Parameters<RateLimiterMemory['get']>) {
    this.missed();
    return super.get(...args);
  }

  override reward(...args: Parameters<RateLimiterMemory['reward']>) {
    this.missed();
    return super.reward(...args);
  }
}

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
  private lastError = 'the connection closed';
  // Set with the one warning of an outage, cleared with the one info line that ends it.
  private away = false;
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
    // here) within the timeout, the ready check too. Reconnects go on, a second apart at most,
    // until the ready check is answered. No socketTimeout: its timer outlives the socket it
    // was set for and drops the next one (ioredis#2147), again and again after an outage.
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    // Said once an outage; without a listener ioredis would print each error itself.
    // An error on a ready connection is followed by its close.
    this.redis.on('error', (err: Error) => {
      this.lastError = err.message;
      if (this.redis!.status !== 'ready') this.fallBack(err.message);
    });
    this.redis.on('close', () => this.fallBack(this.lastError));
    this.redis.on('ready', () => {
      if (this.away)
        this.logger.log('Redis answers again: the rate limits are counted there, shared by every instance');
      [this.away, this.lastError] = [false, 'the connection closed'];
    });
  }

  get counting(): CountingMode {
    if (!this.redis) return 'memory';
    return this.redis.status === 'ready' && !this.away ? 'redis' : 'redis-away';
  }

  limiter({ name, limit, windowSeconds }: RateLimitPolicy & { windowSeconds: number }): RateLimiterAbstract {
    const options = { points: limit, duration: windowSeconds, blockDuration: windowSeconds };
    if (!this.redis) return new RateLimiterMemory({ keyPrefix: name, ...options });
    return new RateLimiterRedis({
      ...options,
      storeClient: this.redis,
      keyPrefix: `${this.config.REDIS_KEY_PREFIX}rate-limit:${name}`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new InsuranceLimiter({ keyPrefix: name, ...options }, () => this.missed()),
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

  // A command failed on a ready connection: Redis is silent (or failing) while the socket
  // stays open, and ioredis would go on sending every hit there to wait out the timeout.
  // Reopened, the connection is ready again only once Redis answers its ready check.
  private missed(): void {
    if (this.counting !== 'redis' || this.closing) return;
    this.fallBack(`a command failed or got no answer within ${this.config.REDIS_COMMAND_TIMEOUT_MS} ms`);
    this.redis!.disconnect(true);
  }

  private fallBack(reason: string): void {
    if (this.away || this.closing) return;
    this.away = true;
    this.logger.warn(
      `Redis does not answer (${reason}): each instance counts the rate limits on its own until it does`,
    );
  }
}
