import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { SecurityCounters } from '../common/metrics';
import { type RateLimitPolicy, RateLimitStore, takeClientHit, tooManyLeakReports } from '../common/rate-limit';
import { API_KEY_HEADER } from './api-key.strategy';
import { CredentialsNotAcceptedError } from './region-keys.errors';
import { RegionKeysSettings } from './region-keys.settings';

/** The name clients see in RateLimit-Policy and RateLimit for the leak-report limit. */
export const LEAK_REPORTS_POLICY = 'leak-reports';

/**
 * The door of POST /auth/region/api-keys/leaked: counts every request per client address
 * (LEAK_REPORT_RATE_LIMIT, whatever its answer, this one's refusal of credentials included),
 * then refuses a request that carries credentials: the route takes none.
 */
@Injectable()
export class LeakReportGuard implements CanActivate {
  private readonly policy: RateLimitPolicy;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    store: RateLimitStore,
    { LEAK_REPORT_RATE_LIMIT: limit, LEAK_REPORT_RATE_WINDOW_SECONDS: windowSeconds }: RegionKeysSettings,
    private readonly counters: SecurityCounters,
  ) {
    const policy = { name: LEAK_REPORTS_POLICY, limit, windowSeconds };
    [this.policy, this.limiter] = [policy, store.limiter(policy)];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    await takeClientHit(context, this.limiter, this.policy, (retryAfter) => {
      this.counters.rateLimited('leak_report');
      return tooManyLeakReports(this.policy, retryAfter);
    });
    const { headers } = context.switchToHttp().getRequest<FastifyRequest>();
    if (headers[API_KEY_HEADER] !== undefined || headers.authorization !== undefined)
      throw new CredentialsNotAcceptedError();
    return true;
  }
}
