import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ProblemDto } from './problem.dto';
import { problemType } from '../problem/problem';

const DEFAULT_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: malformed JSON, unknown fields, wrong types, or a bad parameter.',
  401: 'Missing or invalid credentials.',
  403: 'Authenticated, but not allowed to do this.',
  404: 'Not found.',
  409: 'Conflicts with the current state.',
  413: 'The request body is too large.',
  415: 'The request body is not JSON.',
  429: 'Too many requests; see Retry-After.',
  503: 'Temporarily unavailable; retry after the time given in Retry-After.',
};

const DEFAULT_SLUGS: Record<number, string> = {
  400: 'validation',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  429: 'too-many-requests',
  503: 'unavailable',
};

export type ProblemResponse = number | { status: number; description: string; slug?: string; detail?: string };

/**
 * Declares error responses as `application/problem+json` with the ProblemDto schema and
 * an example, e.g. `@ApiProblems(400, 401, { status: 409, description: '…', slug: 'last-api-key' })`.
 */
export function ApiProblems(...responses: ProblemResponse[]) {
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...responses.map((r) => {
      const { status, description, slug, detail } =
        typeof r === 'number' ? { status: r, description: DEFAULT_DESCRIPTIONS[r] ?? 'Error.', slug: undefined, detail: undefined } : r;
      return ApiResponse({
        status,
        description,
        content: {
          'application/problem+json': {
            schema: { $ref: getSchemaPath(ProblemDto) },
            example: {
              type: problemType(slug ?? DEFAULT_SLUGS[status] ?? `http-${status}`),
              title: description.split(/[.:;]/)[0],
              status,
              detail: detail ?? description,
            },
          },
        },
      });
    }),
  );
}
