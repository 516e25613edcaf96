import { DomainError } from '../problem/problem';
import { type RateLimitPolicy, rateLimitHeaders } from './rate-limit-headers';

export class TooManyRequestsError extends DomainError {
  readonly status = 429;
  readonly slug = 'too-many-requests';
  readonly title = 'Too many requests';

  /** `retryAfter`: seconds until the client may try again (at least 1 is sent). */
  constructor(detail: string, policy: RateLimitPolicy, retryAfter: number) {
    super(detail);
    const seconds = Math.max(1, retryAfter);
    Object.assign(this.headers, { 'Retry-After': String(seconds), ...rateLimitHeaders(policy, { remaining: 0, reset: seconds }) });
  }
}
