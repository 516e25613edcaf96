import { DomainError } from '../problem/problem';
import { TOO_MANY_REQUESTS } from '../problem/problem-types';

export interface RateLimitHeaders {
  limit: number;
  /** Seconds until the client may try again. */
  retryAfter: number;
}

export class TooManyRequestsError extends DomainError {
  constructor(detail: string, { limit, retryAfter }: RateLimitHeaders) {
    super(TOO_MANY_REQUESTS, detail);
    const seconds = String(Math.max(1, retryAfter));
    Object.assign(this.headers, {
      'Retry-After': seconds,
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': seconds,
    });
  }
}
