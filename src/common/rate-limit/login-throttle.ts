import { createHash } from 'node:crypto';

import { Inject, Injectable, Logger } from '@nestjs/common';

import { AppConfig } from '../../config/app-config';
import { SecurityCounters } from '../metrics/security-counters';
import { ServiceUnavailableError } from '../problem/problem';
import { clientAddressKey } from './client-address';
import { MemoryRateLimitStore } from './memory-rate-limit-store';
import type { RateLimitPolicy } from './rate-limit-headers';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
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

export interface LoginAttemptOptions {
  /**
   * When the shared counters (Redis) cannot be reached, count in this process instead of
   * refusing with 503; every outcome but success then keeps its slot. For Basic, which
   * then accepts cached successes only: a guess answered from the cache must still be
   * limited, or it would be an unlimited oracle for as long as Redis is away.
   */
  countLocallyWhenUnavailable?: boolean;
}

export interface LoginAttemptContext {
  /** The shared counters are unreachable and this attempt is counted in this process only. */
  countedLocally: boolean;
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
  private readonly logger = new Logger(LoginThrottle.name);
  // Used only while the shared store is unreachable, by attempts that allow it.
  private readonly local = new MemoryRateLimitStore();

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
    attempt: (context: LoginAttemptContext) => Promise<T | null>,
    options: LoginAttemptOptions = {},
  ): Promise<{ result: T | null; allowance: LoginAllowance }> {
    const key = this.keyOf(clientAddress, email);
    const slot = await this.claim(key, options);
    let result: T | null;
    let keepSlot = true;
    try {
      result = await attempt({ countedLocally: slot.store === this.local });
      keepSlot = result === null;
    } catch (err) {
      keepSlot = slot.store === this.local;
      throw err;
    } finally {
      if (!keepSlot) await this.giveBack(slot.store, key);
    }
    const policy = this.policy();
    const counted = keepSlot ? slot.totalHits : slot.totalHits - 1;
    return { result, allowance: { policy, remaining: Math.max(0, policy.limit - counted), reset: slot.timeToExpire } };
  }

  /** Refuses with 429 when no slot is left, without taking one. */
  async assertAllowed(clientAddress: string, email: string, options: LoginAttemptOptions = {}): Promise<void> {
    const key = this.keyOf(clientAddress, email);
    const { totalHits, timeToExpire } = await this.withFallback(options, (store) => store.peek(key, THROTTLER_NAME));
    if (totalHits >= this.config.LOGIN_FAILURE_LIMIT) throw this.tooMany(timeToExpire);
  }

  /** Takes a slot, or refuses with 429 when none is left. */
  private async claim(
    key: string,
    options: LoginAttemptOptions,
  ): Promise<{ store: RateLimitStore; totalHits: number; timeToExpire: number }> {
    const limit = this.config.LOGIN_FAILURE_LIMIT;
    const windowMs = this.config.LOGIN_FAILURE_WINDOW_SECONDS * 1000;
    const { store, totalHits, timeToExpire, isBlocked, timeToBlockExpire } = await this.withFallback(
      options,
      async (store) => ({
        store,
        ...(await store.increment(key, windowMs, limit, windowMs, THROTTLER_NAME)),
      }),
    );
    if (isBlocked) throw this.tooMany(timeToBlockExpire);
    return { store, totalHits, timeToExpire };
  }

  private async withFallback<T>(options: LoginAttemptOptions, use: (store: RateLimitStore) => Promise<T>): Promise<T> {
    try {
      return await use(this.store);
    } catch (err) {
      if (!(err instanceof ServiceUnavailableError) || !options.countLocallyWhenUnavailable) throw err;
      return use(this.local);
    }
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

  // The sign-in has its answer already: failing to uncount it must not turn it into an error.
  private async giveBack(store: RateLimitStore, key: string): Promise<void> {
    try {
      await store.release(key, THROTTLER_NAME);
    } catch (err) {
      this.logger.warn(`A successful sign-in stays counted as a failure: ${(err as Error).message}`);
    }
  }

  // Hashed so that the counters (in Redis, possibly) hold no email addresses.
  private keyOf(clientAddress: string, email: string): string {
    return createHash('sha256')
      .update(`${clientAddressKey(clientAddress)}\n${email}`)
      .digest('hex');
  }
}
