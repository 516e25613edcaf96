import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { LoginThrottle } from './login-throttle';
import { MemoryRateLimitStore } from './memory-rate-limit-store';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';

/**
 * The counters of area B's rate limits: in Redis when REDIS_URL is set (shared by every
 * instance), else in this process. SignupThrottleGuard counts every sign-up; LoginThrottle
 * counts only failed sign-ins.
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [AppConfig],
      useFactory: (config: AppConfig): RateLimitStore =>
        config.REDIS_URL
          ? new RedisRateLimitStore(config.REDIS_URL, config.REDIS_KEY_PREFIX, config.REDIS_COMMAND_TIMEOUT_MS)
          : new MemoryRateLimitStore(),
    },
    LoginThrottle,
  ],
  exports: [RATE_LIMIT_STORE, LoginThrottle],
})
export class RateLimitModule {}
