import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerRequest } from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { SecurityCounters } from '../metrics/security-counters';
import { clientAddressKey } from './client-address';
import { rateLimitHeaders, type RateLimitPolicy } from './rate-limit-headers';
import { TooManyRequestsError } from './too-many-requests.error';

/** The name clients see in RateLimit-Policy and RateLimit for the sign-up limit. */
export const SIGNUP_POLICY = 'signup';

/**
 * @nestjs/throttler's guard, counting per client address the way the failed-login limit
 * does (an IPv6 client by its /64), answering with the RateLimit-Policy and RateLimit
 * headers beside X-RateLimit-*, and refusing with the API's 429 problem document instead of
 * Nest's plain exception. Applied per route with @UseGuards: it limits only the routes that
 * ask for it, which is the sign-up route alone.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  // A property: the constructor is ThrottlerGuard's, with its own injections.
  @Inject(SecurityCounters) private readonly counters: SecurityCounters;

  protected override async getTracker(request: FastifyRequest): Promise<string> {
    return clientAddressKey(request.ip);
  }

  // The library's own, less what this API does not use (ignored user agents), with this
  // API's headers instead of the library's.
  protected override async handleRequest({
    context,
    limit,
    ttl,
    throttler,
    blockDuration,
    getTracker,
    generateKey,
  }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, throttler.name ?? 'default');
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, throttler.name ?? 'default');
    if (record.isBlocked) await this.throwThrottlingException(context, { ...record, limit, ttl, key, tracker });
    (res as FastifyReply).headers(
      rateLimitHeaders(policyOf(limit, ttl), { remaining: limit - record.totalHits, reset: record.timeToExpire }),
    );
    return true;
  }

  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    this.counters.rateLimited('signup');
    throw new TooManyRequestsError(
      await this.getErrorMessage(context, detail),
      policyOf(detail.limit, detail.ttl),
      detail.timeToBlockExpire,
    );
  }
}

const policyOf = (limit: number, ttlMs: number): RateLimitPolicy => ({
  name: SIGNUP_POLICY,
  limit,
  windowSeconds: Math.round(ttlMs / 1000),
});
