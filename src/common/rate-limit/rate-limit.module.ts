import { Module } from '@nestjs/common';

import { ClientThrottlerGuard } from './client-throttler.guard';
import { RateLimitStore } from './rate-limit-store';

const providers = [RateLimitStore, ClientThrottlerGuard];

/** The counters of every limit (RateLimitStore), and the sign-up limit (ClientThrottlerGuard, on the routes that use it). */
@Module({ providers, exports: providers })
export class RateLimitModule {}
