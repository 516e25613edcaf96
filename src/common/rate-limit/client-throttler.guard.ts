import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { AppConfig } from '../../config/app-config';
import { SecurityCounters } from '../metrics/security-counters';
import type { RateLimitPolicy } from './rate-limit-headers';
import { clientKey, RateLimitStore, takeHitHeaders } from './rate-limit-store';
import { tooManySignups } from './too-many-requests.error';

/** The name clients see in RateLimit-Policy and RateLimit for the sign-up limit. */
export const SIGNUP_POLICY = 'signup';

/**
 * Takes a hit of `limiter` for the request's client address and puts the limit's headers on the
 * reply, or throws `refuse(seconds to wait)` past the limit: the body of a per-client-address guard.
 */
export async function takeClientHit(
  context: ExecutionContext,
  limiter: RateLimiterAbstract,
  policy: RateLimitPolicy,
  refuse: (retryAfter: number) => Error,
): Promise<void> {
  const http = context.switchToHttp();
  const key = clientKey(http.getRequest<FastifyRequest>().ip);
  http.getResponse<FastifyReply>().headers(await takeHitHeaders(limiter, key, policy, refuse));
}

/** Limits the requests per client address of the routes that use it (@UseGuards): sign-up alone. */
@Injectable()
export class ClientThrottlerGuard implements CanActivate {
  private readonly policy: RateLimitPolicy;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    store: RateLimitStore,
    { SIGNUP_RATE_LIMIT: limit, SIGNUP_RATE_WINDOW_SECONDS: windowSeconds }: AppConfig,
    private readonly counters: SecurityCounters,
  ) {
    const policy = { name: SIGNUP_POLICY, limit, windowSeconds };
    [this.policy, this.limiter] = [policy, store.limiter(policy)];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    await takeClientHit(context, this.limiter, this.policy, (retryAfter) => {
      this.counters.rateLimited('signup');
      return tooManySignups(this.policy, retryAfter);
    });
    return true;
  }
}
