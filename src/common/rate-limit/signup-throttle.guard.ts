import { createHash } from 'node:crypto';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { clientAddressKey } from './client-address';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
import { TooManyRequestsError } from './too-many-requests.error';

/**
 * At most SIGNUP_RATE_LIMIT sign-ups per client address a window; every request counts.
 * What @nestjs/throttler's ThrottlerGuard does, on the same storage contract: that guard
 * itself cannot be loaded under Jest on Node 20 (a CommonJS module requiring the
 * ES-module-only @nestjs/common).
 */
@Injectable()
export class SignupThrottleGuard implements CanActivate {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const limit = this.config.SIGNUP_RATE_LIMIT;
    const windowMs = this.config.SIGNUP_RATE_WINDOW_SECONDS * 1000;
    const key = createHash('sha256').update(clientAddressKey(request.ip)).digest('hex');
    const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = await this.store.increment(key, windowMs, limit, windowMs, 'signup');
    if (isBlocked) {
      throw new TooManyRequestsError(`Too many sign-ups from your address. Retry in ${timeToBlockExpire} seconds.`, {
        limit,
        retryAfter: timeToBlockExpire,
      });
    }
    http.getResponse<FastifyReply>().headers({
      'X-RateLimit-Limit': limit,
      'X-RateLimit-Remaining': Math.max(0, limit - totalHits),
      'X-RateLimit-Reset': timeToExpire,
    });
    return true;
  }
}
