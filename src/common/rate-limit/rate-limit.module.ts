import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions } from '@nestjs/throttler';

import { AppConfig } from '../../config/app-config';
import { ScrapedGauges } from '../metrics/scraped-gauges';
import { LoginThrottle } from './login-throttle';
import { MemoryRateLimitStore } from './memory-rate-limit-store';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';
import { signupLimitDetail } from './too-many-requests.error';

/**
 * The counters: in Redis when REDIS_URL is set (shared by every instance, and in this
 * process while Redis is away), else in this process. With the gauge that tells which.
 */
export function rateLimitStore(
  config: Pick<AppConfig, 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>,
  gauges: ScrapedGauges,
): RateLimitStore {
  const store = config.REDIS_URL
    ? new RedisRateLimitStore(config.REDIS_URL, config.REDIS_KEY_PREFIX, config.REDIS_COMMAND_TIMEOUT_MS)
    : new MemoryRateLimitStore();
  gauges.register(
    'redis_degraded',
    'Whether this instance counts the rate limits on its own because Redis does not answer (1), or not (0).',
    () => Promise.resolve(store.counting === 'redis-away' ? 1 : 0),
  );
  return store;
}

@Module({
  providers: [{ provide: RATE_LIMIT_STORE, inject: [AppConfig, ScrapedGauges], useFactory: rateLimitStore }],
  exports: [RATE_LIMIT_STORE],
})
class RateLimitStoreModule {}

/**
 * The sign-up and sign-in limits, on one set of counters. ClientThrottlerGuard (@nestjs/throttler)
 * counts every request of the routes it guards, which is the sign-up route alone;
 * LoginThrottle counts only failed sign-ins.
 */
@Module({
  imports: [
    RateLimitStoreModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [AppConfig, RATE_LIMIT_STORE],
      useFactory: (config: AppConfig, storage: RateLimitStore): ThrottlerModuleOptions => ({
        // Unnamed ("default"), so the headers are plain X-RateLimit-* and Retry-After.
        throttlers: [{ limit: config.SIGNUP_RATE_LIMIT, ttl: config.SIGNUP_RATE_WINDOW_SECONDS * 1000 }],
        storage,
        errorMessage: (_context, { timeToBlockExpire }) => signupLimitDetail(timeToBlockExpire),
      }),
    }),
  ],
  providers: [LoginThrottle],
  exports: [LoginThrottle, RateLimitStoreModule],
})
export class RateLimitModule {}
