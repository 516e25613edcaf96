import { DomainError } from '../problem/problem';
import { declareProblemExample, TOO_MANY_REQUESTS } from '../problem/problem-types';
import { rateLimitHeaders, type RateLimitPolicy } from './rate-limit-headers';

export class TooManyRequestsError extends DomainError {
  /** `retryAfter`: seconds until the client may try again (at least 1 is sent). */
  constructor(detail: string, policy: RateLimitPolicy, retryAfter: number) {
    super(TOO_MANY_REQUESTS, detail);
    const seconds = Math.max(1, retryAfter);
    Object.assign(this.headers, {
      'Retry-After': String(seconds),
      ...rateLimitHeaders(policy, { remaining: 0, reset: seconds }),
    });
  }
}

/** Too many failed sign-ins for one email from one client address. */
export const tooManyLoginFailures = (policy: RateLimitPolicy, retryAfter: number): TooManyRequestsError =>
  new TooManyRequestsError(
    `Too many failed sign-in attempts for this email from your address. Retry in ${retryAfter} seconds.`,
    policy,
    retryAfter,
  );

export const tooManySignups = (policy: RateLimitPolicy, retryAfter: number): TooManyRequestsError =>
  new TooManyRequestsError(`Too many sign-ups from your address. Retry in ${retryAfter} seconds.`, policy, retryAfter);

declareProblemExample(TOO_MANY_REQUESTS, () =>
  tooManyLoginFailures({ name: 'login-failures', limit: 10, windowSeconds: 900 }, 42),
);
