import { Injectable } from '@nestjs/common';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { SecurityCounters } from '../common/metrics';
import {
  clientKey,
  type RateLimitPolicy,
  type RateLimitState,
  RateLimitStore,
  takeHit,
  toSeconds,
} from '../common/rate-limit';
import { AppConfig } from '../config';
import { LOGIN_FAILURES_POLICY, tooManyAddressLoginFailures, tooManyLoginFailures } from './auth.errors';

/** The name of the per-address failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_ADDRESS_FAILURES_POLICY = 'login-failures-address';

export type LoginAllowance = RateLimitState & { policy: RateLimitPolicy };

/**
 * Failed sign-ins (POST /auth/token and Basic) per client address and email, and per client address
 * whatever the email (each costs a bcrypt comparison). An attempt takes a hit of each before its
 * password is checked and gives them back if right: past either limit bcrypt does not run, a right
 * password among concurrent wrong ones learns nothing, and no frequent user is locked out.
 */
@Injectable()
export class LoginThrottle {
  private readonly policy: RateLimitPolicy;
  private readonly limiter: RateLimiterAbstract;
  private readonly addressPolicy: RateLimitPolicy;
  private readonly addressLimiter: RateLimiterAbstract;

  constructor(
    private readonly store: RateLimitStore,
    config: AppConfig,
    private readonly counters: SecurityCounters,
  ) {
    const window = { windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS };
    const policy = { name: LOGIN_FAILURES_POLICY, limit: config.LOGIN_FAILURE_LIMIT, ...window };
    const addressPolicy = { name: LOGIN_ADDRESS_FAILURES_POLICY, limit: config.LOGIN_ADDRESS_FAILURE_LIMIT, ...window };
    [this.policy, this.limiter] = [policy, store.limiter(policy)];
    [this.addressPolicy, this.addressLimiter] = [addressPolicy, store.limiter(addressPolicy)];
  }

  /** `attempt` resolves to null for wrong credentials, which keep the hit; a success or an error gives it back. */
  async attempt<T>(
    clientAddress: string,
    email: string,
    attempt: () => Promise<T | null>,
  ): Promise<{ result: T | null; allowance: LoginAllowance }> {
    const [key, addressKey] = [clientKey(clientAddress, email), clientKey(clientAddress)];
    const counting = this.store.counting;
    const hit = await takeHit(this.limiter, key, (retryAfter) => this.tooMany(retryAfter));
    // Refused here, the hit for this email stays: it is this address's own.
    await takeHit(this.addressLimiter, addressKey, (retryAfter) => this.tooMany(retryAfter, true));
    let failed = false;
    try {
      const result = await attempt();
      failed = result === null;
      const remaining = this.policy.limit - hit.consumedPoints + (failed ? 0 : 1);
      return { result, allowance: { policy: this.policy, remaining, reset: toSeconds(hit.msBeforeNext) } };
    } finally {
      // Given back where it was counted: if Redis came or went meanwhile, it stays counted.
      if (!failed && this.store.counting === counting)
        await Promise.all([this.limiter.reward(key), this.addressLimiter.reward(addressKey)]).catch(() => undefined);
    }
  }

  /** For credentials already verified (the Basic cache): refuses with 429 when no attempt is left, taking none. */
  async assertAllowed(clientAddress: string, email: string): Promise<void> {
    const key = clientKey(clientAddress, email);
    // Nearly always no failure is counted: one read says so, and the window's end is asked only to refuse.
    const used = await this.store.used(this.limiter, key);
    if (used !== undefined && used < this.policy.limit) return;
    const window = await this.limiter.get(key);
    if (window && window.consumedPoints >= this.policy.limit) throw this.tooMany(toSeconds(window.msBeforeNext));
  }

  private tooMany(retryAfter: number, perAddress = false) {
    this.counters.rateLimited('login');
    if (perAddress) return tooManyAddressLoginFailures(this.addressPolicy, retryAfter);
    return tooManyLoginFailures(this.policy, retryAfter);
  }
}
