import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { clientAddressKey } from './client-address';
import { RATE_LIMIT_STORE, type RateLimitStore } from './rate-limit-store';
import { TooManyRequestsError } from './too-many-requests.error';

const THROTTLER_NAME = 'login-failures';

export interface LoginAllowance {
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  reset: number;
}

/**
 * Limits failed sign-ins (POST /auth/token and Basic alike: both guess the same password)
 * per client address and email. Only failures count, so a user who signs in often is never
 * locked out, and a client past the limit is refused before its password is checked: no
 * bcrypt work, and no way to learn that a later guess was right.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly config: AppConfig,
  ) {}

  async assertAllowed(clientAddress: string, email: string): Promise<LoginAllowance> {
    const limit = this.config.LOGIN_FAILURE_LIMIT;
    const { totalHits, timeToExpire } = await this.store.peek(this.keyOf(clientAddress, email), THROTTLER_NAME);
    if (totalHits >= limit) {
      throw new TooManyRequestsError(
        `Too many failed sign-in attempts for this email from your address. Retry in ${timeToExpire} seconds.`,
        { limit, retryAfter: timeToExpire },
      );
    }
    return { limit, remaining: limit - totalHits, reset: timeToExpire };
  }

  async recordFailure(clientAddress: string, email: string): Promise<LoginAllowance> {
    const limit = this.config.LOGIN_FAILURE_LIMIT;
    const windowMs = this.config.LOGIN_FAILURE_WINDOW_SECONDS * 1000;
    const { totalHits, timeToExpire } = await this.store.increment(this.keyOf(clientAddress, email), windowMs, limit, windowMs, THROTTLER_NAME);
    return { limit, remaining: Math.max(0, limit - totalHits), reset: timeToExpire };
  }

  // Hashed so that the counters (in Redis, possibly) hold no email addresses.
  private keyOf(clientAddress: string, email: string): string {
    return createHash('sha256').update(`${clientAddressKey(clientAddress)}\n${email}`).digest('hex');
  }
}
