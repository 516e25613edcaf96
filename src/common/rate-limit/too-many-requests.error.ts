import { DomainError } from '../problem/problem';

export interface RateLimitHeaders {
  limit: number;
  /** Seconds until the client may try again. */
  retryAfter: number;
}

export class TooManyRequestsError extends DomainError {
  readonly status = 429;
  readonly slug = 'too-many-requests';
  readonly title = 'Too many requests';

  constructor(detail: string, { limit, retryAfter }: RateLimitHeaders) {
    super(detail);
    const seconds = String(Math.max(1, retryAfter));
    Object.assign(this.headers, {
      'Retry-After': seconds,
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': seconds,
    });
  }
}
