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

const tooMany = (what: string) => (policy: RateLimitPolicy, retryAfter: number) =>
  new TooManyRequestsError(`Too many ${what} from your address. Retry in ${retryAfter} seconds.`, policy, retryAfter);

/** The name of the per-address-and-email failed-sign-in limit, in its counters and RateLimit-Policy. */
export const LOGIN_FAILURES_POLICY = 'login-failures';

/** Too many failed sign-ins for one email from one client address. */
export const tooManyLoginFailures = tooMany('failed sign-in attempts for this email');
/** Too many failed sign-ins from one client address, whatever the email. */
export const tooManyAddressLoginFailures = tooMany('failed sign-in attempts');
export const tooManySignups = tooMany('sign-ups');
export const tooManyLeakReports = tooMany('leak reports');

declareProblemExample(TOO_MANY_REQUESTS, () =>
  tooManyLoginFailures({ name: LOGIN_FAILURES_POLICY, limit: 10, windowSeconds: 900 }, 42),
);
