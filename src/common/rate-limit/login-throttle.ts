import { createHash } from 'node:crypto';

import { Inject, Injectable } from '@nestjs/common';

import { AppConfig } from '../../config/app-config';
import { SecurityCounters } from '../metrics/security-counters';
import { clientAddressKey } from './client-address';
import type { RateLimitPolicy } from './rate-limit-headers';
import { RATE_LIMIT_STORE, type RateLimitSlot, type RateLimitStore } from './rate-limit-store';
import { tooManyLoginFailures, type TooManyRequestsError } from './too-many-requests.error';

/** The name of the failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_FAILURES_POLICY = 'login-failures';
const THROTTLER_NAME = LOGIN_FAILURES_POLICY;

export interface LoginAllowance {
  policy: RateLimitPolicy;
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

/**
 * Limits failed sign-ins (POST /auth/token and Basic alike: both guess the same password)
 * per client address and email.
 *
 * Each attempt takes a slot before its password is checked, atomically (one Redis script,
 * or one synchronous step in memory), and gives it back when the password was right. So
 * concurrent attempts cannot all pass a check made before any of them failed: past the
 * limit an attempt is refused before bcrypt runs, and a right password sent among many
 * wrong ones learns nothing once they have used the slots. Only failures stay counted, so
 * a user who signs in often is never locked out (though one with more sign-ins in flight
 * at once than the limit may see a 429 for the extra ones).
 *
 * Credentials already verified (the Basic cache) need no slot: they are checked against
 * the count with `assertAllowed`, which is atomic too, and a success counts for nothing,
 * so such a check is as if it took a slot and gave it back at once.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly config: AppConfig,
    private readonly counters: SecurityCounters,
  ) {}

  /**
   * Runs `attempt` in a slot of the allowance. It resolves to the signed-in value, or to
   * null for wrong credentials, which keeps the slot. Success, or an error (a database
   * fault says nothing about the password), gives the slot back. `allowance` is what is
   * left after this attempt.
   */
  async attempt<T>(
    clientAddress: string,
    email: string,
    attempt: () => Promise<T | null>,
  ): Promise<{ result: T | null; allowance: LoginAllowance }> {
    const slot = await this.claim(this.keyOf(clientAddress, email));
    let result: T | null;
    try {
      result = await attempt();
    } catch (err) {
      await slot.release();
      throw err;
    }
    if (result !== null) await slot.release();
    const policy = this.policy();
    const counted = result === null ? slot.totalHits : slot.totalHits - 1;
    return { result, allowance: { policy, remaining: Math.max(0, policy.limit - counted), reset: slot.timeToExpire } };
  }

  /** Refuses with 429 when no slot is left, without taking one. */
  async assertAllowed(clientAddress: string, email: string): Promise<void> {
    const { totalHits, timeToExpire } = await this.store.peek(this.keyOf(clientAddress, email), THROTTLER_NAME);
    if (totalHits >= this.config.LOGIN_FAILURE_LIMIT) throw this.tooMany(timeToExpire);
  }

  /** Takes a slot, or refuses with 429 when none is left. */
  private async claim(key: string): Promise<RateLimitSlot> {
    const windowMs = this.config.LOGIN_FAILURE_WINDOW_SECONDS * 1000;
    const slot = await this.store.take(key, windowMs, this.config.LOGIN_FAILURE_LIMIT, windowMs, THROTTLER_NAME);
    if (slot.isBlocked) throw this.tooMany(slot.timeToBlockExpire);
    return slot;
  }

  private tooMany(retryAfter: number): TooManyRequestsError {
    this.counters.rateLimited('login');
    return tooManyLoginFailures(this.policy(), retryAfter);
  }

  /** The limit as clients see it in RateLimit-Policy (named as the counters are). */
  private policy(): RateLimitPolicy {
    return {
      name: THROTTLER_NAME,
      limit: this.config.LOGIN_FAILURE_LIMIT,
      windowSeconds: this.config.LOGIN_FAILURE_WINDOW_SECONDS,
    };
  }

  // Hashed so that the counters (in Redis, possibly) hold no email addresses.
  private keyOf(clientAddress: string, email: string): string {
    return createHash('sha256')
      .update(`${clientAddressKey(clientAddress)}\n${email}`)
      .digest('hex');
  }
}
