import { Injectable } from '@nestjs/common';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { AppConfig } from '../../config/app-config';
import { SecurityCounters } from '../metrics/security-counters';
import { clientAddressKey } from './client-address';
import type { RateLimitPolicy, RateLimitState } from './rate-limit-headers';
import { counterKey, RateLimitStore, takeHit, toSeconds } from './rate-limit-store';
import { tooManyLoginFailures } from './too-many-requests.error';

/** The name of the failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_FAILURES_POLICY = 'login-failures';

export type LoginAllowance = RateLimitState & { policy: RateLimitPolicy };

/**
 * Limits failed sign-ins (POST /auth/token and Basic alike) per client address and email. An
 * attempt takes a hit, atomically, before its password is checked, and gives it back if right:
 * past the limit an attempt is refused before bcrypt runs, a right password among many
 * concurrent wrong ones learns nothing, and a user who signs in often is never locked out.
 */
@Injectable()
export class LoginThrottle {
  private readonly policy: RateLimitPolicy;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly store: RateLimitStore,
    config: AppConfig,
    private readonly counters: SecurityCounters,
  ) {
    const { LOGIN_FAILURE_LIMIT: limit, LOGIN_FAILURE_WINDOW_SECONDS: windowSeconds } = config;
    const policy = { name: LOGIN_FAILURES_POLICY, limit, windowSeconds };
    [this.policy, this.limiter] = [policy, store.limiter(policy)];
  }

  /** `attempt` resolves to null for wrong credentials, which keep the hit; a success or an error gives it back. */
  async attempt<T>(
    clientAddress: string,
    email: string,
    attempt: () => Promise<T | null>,
  ): Promise<{ result: T | null; allowance: LoginAllowance }> {
    const key = counterKey(clientAddressKey(clientAddress), email);
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
    const window = await this.limiter.get(counterKey(clientAddressKey(clientAddress), email));
    if (window && window.consumedPoints >= this.policy.limit) throw this.tooMany(toSeconds(window.msBeforeNext));
  }

  private tooMany(retryAfter: number) {
    this.counters.rateLimited('login');
    return tooManyLoginFailures(this.policy, retryAfter);
  }
}
