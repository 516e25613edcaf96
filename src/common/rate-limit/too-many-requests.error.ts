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

/** Too many failed sign-ins for one email from one client address. */
export const tooManyLoginFailures = tooMany('failed sign-in attempts for this email');
export const tooManySignups = tooMany('sign-ups');

declareProblemExample(TOO_MANY_REQUESTS, () =>
  tooManyLoginFailures({ name: 'login-failures', limit: 10, windowSeconds: 900 }, 42),
);
