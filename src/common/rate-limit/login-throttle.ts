import { Injectable } from '@nestjs/common';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { AppConfig } from '../../config/app-config';
import { SecurityCounters } from '../metrics/security-counters';
import type { RateLimitPolicy, RateLimitState } from './rate-limit-headers';
import { clientKey, RateLimitStore, takeHit, toSeconds } from './rate-limit-store';
import { tooManyLoginFailures } from './too-many-requests.error';

/** The name of the failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_FAILURES_POLICY = 'login-failures';

export type LoginAllowance = RateLimitState & { policy: RateLimitPolicy };

/**
 * Failed sign-ins (POST /auth/token and Basic) per client address and email. An attempt takes a
 * hit before its password is checked and gives it back if right: past the limit bcrypt does not
 * run, a right password among concurrent wrong ones learns nothing, and no frequent user is locked out.
 */
@Injectable()
export class LoginThrottle {
  private readonly policy: RateLimitPolicy;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly store: RateLimitStore,
    { LOGIN_FAILURE_LIMIT: limit, LOGIN_FAILURE_WINDOW_SECONDS: windowSeconds }: AppConfig,
    private readonly counters: SecurityCounters,
  ) {
    const policy = { name: LOGIN_FAILURES_POLICY, limit, windowSeconds };
    [this.policy, this.limiter] = [policy, store.limiter(policy)];
  }

  /** `attempt` resolves to null for wrong credentials, which keep the hit; a success or an error gives it back. */
  async attempt<T>(
    clientAddress: string,
    email: string,
    attempt: () => Promise<T | null>,
  ): Promise<{ result: T | null; allowance: LoginAllowance }> {
    const key = clientKey(clientAddress, email);
    const counting = this.store.counting;
    const hit = await takeHit(this.limiter, key, (retryAfter) => this.tooMany(retryAfter));
    let failed = false;
    try {
      const result = await attempt();
      failed = result === null;
      const remaining = this.policy.limit - hit.consumedPoints + (failed ? 0 : 1);
      return { result, allowance: { policy: this.policy, remaining, reset: toSeconds(hit.msBeforeNext) } };
    } finally {
      // Given back where it was counted: if Redis came or went meanwhile, it stays counted.
      if (!failed && this.store.counting === counting) await this.limiter.reward(key).catch(() => undefined);
    }
  }

  /** For credentials already verified (the Basic cache): refuses with 429 when no attempt is left, taking none. */
  async assertAllowed(clientAddress: string, email: string): Promise<void> {
    const window = await this.limiter.get(clientKey(clientAddress, email));
    if (window && window.consumedPoints >= this.policy.limit) throw this.tooMany(toSeconds(window.msBeforeNext));
  }

  private tooMany(retryAfter: number) {
    this.counters.rateLimited('login');
    return tooManyLoginFailures(this.policy, retryAfter);
  }
}
