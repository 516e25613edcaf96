import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader, DECORATORS } from '@nestjs/swagger';

import { VALIDATION } from '../problem';
import { ApiProblems } from '../swagger';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_REUSED,
  IDEMPOTENT_ANSWER_LOST,
  IDEMPOTENT_REQUEST_IN_PROGRESS,
} from './idempotency.errors';
import {
  IdempotencyInterceptor,
  IDEMPOTENT_OPTIONS,
  type IdempotentOptions,
  REPLAYED_HEADER,
} from './idempotency.interceptor';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key-header';

type Responses = Record<string, { headers?: Record<string, object> }>;

/** Declares Idempotent-Replayed on the operation's success responses, which must be declared below this decorator. */
const declareReplayedHeader: MethodDecorator = (_target, key, descriptor) => {
  const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) as Responses | undefined;
  const success = Object.keys(responses ?? {}).filter((status) => status.startsWith('2'));
  if (!responses || success.length === 0)
    throw new Error(`@Idempotent() on ${String(key)}: declare the success response below it`);
  for (const status of success) {
    responses[status].headers = {
      ...responses[status].headers,
      [REPLAYED_HEADER]: {
        description:
          'Present, and `true`, when this is the kept answer of an earlier request with the same Idempotency-Key.',
        schema: { type: 'string', enum: ['true'] },
      },
    };
  }
  return descriptor;
};

/**
 * A route that creates, made safe to retry with the Idempotency-Key header: the same key,
 * caller and request within 24 hours get the first answer again (marked Idempotent-Replayed)
 * instead of a second create. Declares the header and the 400, 409 and 422 problems in the
 * OpenAPI document. Place it above the route's success response.
 */
export const Idempotent = (options: IdempotentOptions) =>
  applyDecorators(
    SetMetadata(IDEMPOTENT_OPTIONS, options),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      // No example: Swagger UI would send it with every "Try it out", so that every reader's
      // requests would share one key (see docs/api.md, Retrying a create).
      description:
        'A key you generate, new and random for each request (a UUID v4), that makes this request safe to retry: ' +
        'the same key, from the same caller, with the ' +
        'same request within 24 hours gets the first answer again, with `Idempotent-Replayed: true`, and nothing ' +
        'is created twice. A quoted string (`"…"`, the IETF form) or a bare token, 1 to 255 printable ASCII ' +
        'characters. Leave it empty to send none.',
      schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH + 2 },
    }),
    ApiProblems(
      {
        types: [VALIDATION],
        description: 'A malformed Idempotency-Key (empty, too long, control characters, sent twice).',
      },
      {
        types: [IDEMPOTENT_REQUEST_IN_PROGRESS, IDEMPOTENT_ANSWER_LOST],
        description:
          'A request with this Idempotency-Key is still in progress (`idempotent-request-in-progress`: retry after ' +
          'Retry-After), or was carried out and its answer lost (`idempotent-answer-lost`: it will not be done again).',
        headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
      },
      {
        types: [IDEMPOTENCY_KEY_REUSED],
        description:
          'This Idempotency-Key was used in the last 24 hours for a different request (another body or path).',
      },
    ),
    declareReplayedHeader,
  );
