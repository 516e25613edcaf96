import { applyDecorators, type Type } from '@nestjs/common';
import { ApiCreatedResponse, ApiParam } from '@nestjs/swagger';

import { locationHeader } from '../common/http';
import { NOT_FOUND, VALIDATION } from '../common/problem';
import { ApiProblems, type ProblemResponse } from '../common/swagger';
import { notAUuid } from '../common/validation';
import { ApiKeyNotFoundError } from './region-keys.errors';

/** A key's URI: GET reads it, PATCH changes it, DELETE revokes it, and /usage below it reads its usage. */
export const apiKeyPath = (id: string): string => `/auth/region/api-keys/${id}`;
const KEY_LOCATION = locationHeader(
  'The URI of the new key: GET it (with a key holding region:read), PATCH it, or DELETE it to revoke it.',
  '/auth/region/api-keys/3f0c1d2e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
);

/** The 201 of a route that makes a key: the key, and its URI in Location. */
export const ApiKeyCreated = (type: Type, description: string) =>
  ApiCreatedResponse({ type, description, headers: KEY_LOCATION });

const KEY_NOT_FOUND: ProblemResponse = {
  types: [NOT_FOUND],
  description:
    'No active key with this id in your region: none was made, or it was revoked, has expired or is of another region.',
  examples: [() => new ApiKeyNotFoundError()],
};

/**
 * Documents a route's `id` of a key of the caller's region (read with @UuidParam('id')): the
 * parameter, its 400, and the 404 of no such key (`notFound`, for a route that finds keys
 * otherwise). List it above the route's own @ApiProblems: of two examples of one problem
 * type, the route's own is kept.
 */
export const ApiKeyId = ({
  description = "The key's id (from GET /auth/regions/me).",
  notFound = KEY_NOT_FOUND,
}: { description?: string; notFound?: ProblemResponse } = {}) =>
  applyDecorators(
    ApiParam({ name: 'id', format: 'uuid', description }),
    ApiProblems(
      { types: [VALIDATION], description: 'The id is not a UUID.', examples: [() => notAUuid('id')] },
      notFound,
    ),
  );
