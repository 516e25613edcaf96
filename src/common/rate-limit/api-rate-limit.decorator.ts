import { TOO_MANY_REQUESTS, UNAVAILABLE } from '../problem/problem-types';
import { ApiProblems } from '../swagger/api-problems.decorator';

export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests (or failed attempts) allowed in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'How many of them are left.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'integer' } },
} as const;

const RETRY_AFTER = { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } as const;

/** 429 with its headers, and 503 for when the shared counters (Redis) are unreachable. */
const ApiRateLimited = (description: string) =>
  ApiProblems(
    { types: [TOO_MANY_REQUESTS], description, headers: { 'Retry-After': RETRY_AFTER, ...RATE_LIMIT_HEADERS } },
    { types: [UNAVAILABLE], description: 'Rate limiting or the database is temporarily unavailable; retry shortly.' },
  );

export const ApiLoginRateLimited = (description = 'Too many failed sign-ins from this client for this email; see Retry-After.') => ApiRateLimited(description);

export const ApiSignupRateLimited = () => ApiRateLimited('Too many sign-ups from this client; see Retry-After.');
