import { type CanActivate, type ExecutionContext, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { SecurityCounters } from '../common/metrics';
import { type RateLimitPolicy, RateLimitStore, takeClientHit } from '../common/rate-limit';
import { API_KEY_HEADER } from './api-key.strategy';
import { CredentialsNotAcceptedError, tooManyLeakReports } from './region-keys.errors';
import { RegionKeysSettings } from './region-keys.settings';

/** The name clients see in RateLimit-Policy and RateLimit for the leak-report limit. */
export const LEAK_REPORTS_POLICY = 'leak-reports';

/**
 * The door of POST /auth/region/api-keys/leaked: counts every request per client address
 * (LEAK_REPORT_RATE_LIMIT, whatever its answer, this one's refusal of credentials included),
 * then refuses a request that carries credentials: the route takes none.
 *
 * The counters are the application's one RateLimitStore, found at start in a server only (as
 * ApiKeyAuthGuard finds its strategy): the operator CLI loads this feature's module, and must
 * not open a connection to Redis for a route it never serves.
 */
@Injectable()
export class LeakReportGuard implements CanActivate, OnModuleInit {
  private readonly policy: RateLimitPolicy & { windowSeconds: number };
  private limiter!: RateLimiterAbstract;

  constructor(
    { LEAK_REPORT_RATE_LIMIT: limit, LEAK_REPORT_RATE_WINDOW_SECONDS: windowSeconds }: RegionKeysSettings,
    private readonly counters: SecurityCounters,
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
  ) {
    this.policy = { name: LEAK_REPORTS_POLICY, limit, windowSeconds };
  }

  onModuleInit(): void {
    if (this.adapterHost.httpAdapter)
      this.limiter = this.moduleRef.get(RateLimitStore, { strict: false }).limiter(this.policy);
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
