import { applyDecorators } from '@nestjs/common';

import { type ProblemExample, TOO_MANY_REQUESTS, UNAVAILABLE } from '../problem/problem-types';
import { ApiProblems } from '../swagger/api-problems.decorator';
import { SIGNUP_POLICY } from './client-throttler.guard';
import { tooManySignups } from './too-many-requests.error';

const integer = (description: string) => ({ description, schema: { type: 'integer' } }) as const;

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
  'X-RateLimit-Limit': integer('Requests (or failed attempts) allowed in the current window.'),
  'X-RateLimit-Remaining': integer('How many of them are left.'),
  'X-RateLimit-Reset': integer('Seconds until the window ends.'),
} as const;

/** 429 with its headers (Retry-After among them); `example` is the limit's refusal, as the code makes it. */
export const ApiTooManyRequests = (description: string, example: ProblemExample) =>
  ApiProblems({ types: [TOO_MANY_REQUESTS], description, examples: [example], headers: RATE_LIMIT_HEADERS });

/** 429 with its headers, and 503 for when the database is unreachable. */
export const ApiRateLimited = (description: string, example: ProblemExample) =>
  applyDecorators(
    ApiTooManyRequests(description, example),
    ApiProblems({ types: [UNAVAILABLE], description: 'The database is temporarily unavailable; retry shortly.' }),
  );

export const ApiSignupRateLimited = () =>
  ApiRateLimited('Too many sign-ups from this client; see Retry-After.', () =>
    tooManySignups({ name: SIGNUP_POLICY, limit: 20, windowSeconds: 60 }, 42),
  );
