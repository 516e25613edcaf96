import { Module } from '@nestjs/common';

import { ClientThrottlerGuard } from './client-throttler.guard';
import { LoginThrottle } from './login-throttle';
import { RateLimitStore } from './rate-limit-store';

/** The sign-up limit (ClientThrottlerGuard, on the routes that use it) and the failed-sign-in limit. */
@Module({
  providers: [RateLimitStore, LoginThrottle, ClientThrottlerGuard],
  exports: [RateLimitStore, LoginThrottle, ClientThrottlerGuard],
})
export class RateLimitModule {}
