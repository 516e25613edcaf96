import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';

import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

import { AppConfig } from '../../config/app-config';
import { NoScrapedGauges, ScrapedGauges } from '../metrics/scraped-gauges';
import { clientAddressKey } from './client-address';
import { rateLimitHeaders, type RateLimitPolicy } from './rate-limit-headers';

type RedisConfig = Pick<AppConfig, 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>;

/** `memory`: no REDIS_URL; `redis`: shared by every instance; `redis-away`: here, as Redis does not answer. */
export type CountingMode = 'memory' | 'redis' | 'redis-away';

export const toSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** A client's key, with `more` (an email), hashed: the counters (in Redis, maybe) hold no addresses or emails. */
export const clientKey = (ip: string, ...more: string[]): string => {
  const key = [clientAddressKey(ip), ...more].join('\n');
  return createHash('sha256').update(key).digest('hex');
};

/** Counts a hit, or throws `refuse(seconds to wait)` past the limit. */
export const takeHit = (limiter: RateLimiterAbstract, key: string, refuse: (retryAfter: number) => Error) =>
  limiter.consume(key).catch((refused: unknown) => {
    throw refused instanceof RateLimiterRes ? refuse(toSeconds(refused.msBeforeNext)) : refused;
  });

/** As takeHit, answering the RateLimit headers of `policy` for what is left after the hit. */
export const takeHitHeaders = async (
  limiter: RateLimiterAbstract,
  key: string,
  policy: RateLimitPolicy,
  refuse: (retryAfter: number) => Error,
): Promise<Record<string, string>> => {
  const hit = await takeHit(limiter, key, refuse);
  return rateLimitHeaders(policy, { remaining: hit.remainingPoints, reset: toSeconds(hit.msBeforeNext) });
};

/** Where a Redis limiter counts what Redis does not take; tells `missed` of each such hit or read. */
class InsuranceLimiter extends RateLimiterMemory {
  missed = (): void => undefined;

  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.missed();
    return super.consume(...args);
  }

  override get(...args: Parameters<RateLimiterMemory['get']>) {
    this.missed();
    return super.get(...args);
  }
}

/**
 * The counters of every limit (fixed windows; unless told not to, the hit past the limit blocks the key a window): in
 * Redis when REDIS_URL is set, shared by every instance, else here. Redis holds counters, not truth:
 * while it is away, each limiter counts in its in-process insurance limiter rather than refuse.
 */
@Injectable()
export class RateLimitStore implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly redis?: Redis;
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
    // No offline queue and nothing resent: a command, the ready check too, is answered or fails
    // within the timeout. Reconnects go on, a second apart at most, until the ready check is
    // answered. No socketTimeout: its timer outlives its socket and drops the next (ioredis#2147).
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    // Said once an outage (an error on a ready connection is followed by its close); without
    // a listener ioredis would print each error itself.
    this.redis.on('error', (err: Error) => {
      if (/DB index/i.test(err.message)) this.giveUp(err.message);
      else if (this.redis!.status !== 'ready') this.fallBack(err.message);
    });
    this.redis.on('close', () => this.fallBack('the connection closed'));
    this.redis.on('ready', () => {
      if (this.away)
        this.logger.log('Redis answers again: the rate limits are counted there, shared by every instance');
      this.away = false;
    });
  }

  get counting(): CountingMode {
    if (!this.redis) return 'memory';
    return this.redis.status === 'ready' && !this.away ? 'redis' : 'redis-away';
  }

  /** `blockWhenSpent: false`: a key past the limit is refused until its window ends, no longer. */
  limiter(
    { name, limit, windowSeconds }: RateLimitPolicy & { windowSeconds: number },
    { blockWhenSpent = true } = {},
  ): RateLimiterAbstract {
    const blockDuration = blockWhenSpent ? windowSeconds : 0;
    const options = { keyPrefix: name, points: limit, duration: windowSeconds, blockDuration };
    if (!this.redis) return new RateLimiterMemory(options);
    const insuranceLimiter = Object.assign(new InsuranceLimiter(options), { missed: () => this.missed() });
    const keyPrefix = `${this.config.REDIS_KEY_PREFIX}rate-limit:${name}`;
    const redis = { storeClient: this.redis, rejectIfRedisNotReady: true };
    return new RateLimiterRedis({ ...options, ...redis, keyPrefix, insuranceLimiter });
  }

  /**
   * The hits `key` has taken in `limiter`'s window, by one GET where the limiter's own get() sends a
   * transaction (GET and PTTL); undefined where only get() can tell (no Redis, or Redis away).
   */
  async used(limiter: RateLimiterAbstract, key: string): Promise<number | undefined> {
    if (this.counting !== 'redis') return undefined;
    const value = await this.redis!.get(limiter.getKey(key)).catch(() => undefined);
    return value === undefined ? undefined : Number(value ?? 0);
  }

  /** Gives Redis up to the command timeout to answer before the first request; then starts without it. */
  async onModuleInit(): Promise<void> {
    if (this.counting !== 'redis-away' || this.closing) return;
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

  // A command failed on a ready connection: Redis is silent (or failing), and each hit would wait
  // out the timeout. Reopened, the connection is ready again once Redis answers the ready check.
  private missed(): void {
    if (this.counting !== 'redis' || this.closing) return;
    this.fallBack(`no answer within ${this.config.REDIS_COMMAND_TIMEOUT_MS} ms, or an error`);
    this.redis!.disconnect(true);
  }

  // REDIS_URL's database is not on this Redis, where ioredis would go on in database 0: never share it.
  private giveUp(reason: string): void {
    [this.away, this.closing] = [true, true];
    this.redis!.disconnect(false);
    this.logger.error(`REDIS_URL's database is not on this Redis (${reason}): counting here until a restart`);
  }

  private fallBack(reason: string): void {
    if (this.away || this.closing) return;
    this.away = true;
    const outcome = 'each instance counts the rate limits on its own until it does';
    this.logger.warn(`Redis does not answer (${reason}): ${outcome}`);
  }
}
