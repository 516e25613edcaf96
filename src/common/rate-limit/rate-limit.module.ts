import { Module } from '@nestjs/common';

import { ClientThrottlerGuard } from './client-throttler.guard';
import { LoginThrottle } from './login-throttle';
import { RateLimitStore } from './rate-limit-store';

const providers = [RateLimitStore, LoginThrottle, ClientThrottlerGuard];

/** The sign-up limit (ClientThrottlerGuard, on the routes that use it) and the failed-sign-in limit. */
@Module({ providers, exports: providers })
export class RateLimitModule {}
