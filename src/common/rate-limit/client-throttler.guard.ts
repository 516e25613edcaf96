import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { SecurityCounters } from '../metrics/security-counters';
import { clientAddressKey } from './client-address';
import { TooManyRequestsError } from './too-many-requests.error';

/**
 * @nestjs/throttler's guard, counting per client address the way the failed-login limit
 * does (an IPv6 client by its /64), and refusing with the API's 429 problem document
 * (Retry-After and X-RateLimit-* included) instead of Nest's plain exception. Applied per
 * route with @UseGuards: it limits only the routes that ask for it.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  // A property: the constructor is ThrottlerGuard's, with its own injections.
  @Inject(SecurityCounters) private readonly counters: SecurityCounters;

  protected override async getTracker(request: FastifyRequest): Promise<string> {
    return clientAddressKey(request.ip);
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    this.counters.rateLimited('signup');
    throw new TooManyRequestsError(await this.getErrorMessage(context, detail), { limit: detail.limit, retryAfter: detail.timeToBlockExpire });
  }
}
