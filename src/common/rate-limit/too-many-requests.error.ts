import { DomainError } from '../problem/problem';
import { TOO_MANY_REQUESTS } from '../problem/problem-types';
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

/** The refusal of a per-address limit on `what`, made from the limit and the seconds to wait. */
export const tooMany = (what: string) => (policy: RateLimitPolicy, retryAfter: number) =>
  new TooManyRequestsError(`Too many ${what} from your address. Retry in ${retryAfter} seconds.`, policy, retryAfter);

export const tooManySignups = tooMany('sign-ups');
