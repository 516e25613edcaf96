import { applyDecorators } from '@nestjs/common';

import { TOO_MANY_REQUESTS, UNAVAILABLE } from '../problem/problem-types';
import { ApiProblems } from '../swagger/api-problems.decorator';

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description:
      'The limit (draft-ietf-httpapi-ratelimit-headers): its name, the quota `q` (requests, or failed attempts) and the window `w` in seconds.',
    schema: { type: 'string', example: '"signup";q=20;w=60' },
  },
  RateLimit: {
    description:
      'What is left of it now (draft-ietf-httpapi-ratelimit-headers): `r` remaining, `t` seconds until the window ends.',
    schema: { type: 'string', example: '"signup";r=19;t=60' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests (or failed attempts) allowed in the current window.',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'How many of them are left.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'integer' } },
} as const;

const RETRY_AFTER = { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } as const;

/** 429 with its headers. */
export const ApiTooManyRequests = (description: string, detail?: string) =>
  ApiProblems({
    types: [TOO_MANY_REQUESTS],
    description,
    detail,
    headers: { 'Retry-After': RETRY_AFTER, ...RATE_LIMIT_HEADERS },
  });

/** 429 with its headers, and 503 for when the shared counters (Redis) are unreachable. */
const ApiRateLimited = (description: string) =>
  applyDecorators(
    ApiTooManyRequests(description),
    ApiProblems({
      types: [UNAVAILABLE],
      description: 'Rate limiting or the database is temporarily unavailable; retry shortly.',
    }),
  );

export const ApiLoginRateLimited = (
  description = 'Too many failed sign-ins from this client for this email; see Retry-After.',
) => ApiRateLimited(description);

export const ApiSignupRateLimited = () => ApiRateLimited('Too many sign-ups from this client; see Retry-After.');
