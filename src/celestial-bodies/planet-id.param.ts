import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiParam, type ApiParamOptions } from '@nestjs/swagger';

import { NOT_FOUND, VALIDATION, ValidationFailedError } from '../common/problem';
import { ApiProblems } from '../common/swagger';
import { refusalOf } from '../common/validation';
import { INT4_MAX } from '../database';
import { PlanetNotFoundError } from './celestial-bodies.errors';

const POSITIVE_INTEGER = /^[1-9]\d{0,9}$/;

/**
 * The `planetId` path parameter as a number. Read from the raw text (a custom decorator,
 * not @Param with a pipe, because the global pipe would first turn "1.5" or "0x1" into a
 * number): only plain decimal integers from 1 to INT4_MAX pass; anything else is a 400.
 */
export const PlanetId = createParamDecorator((_: unknown, ctx: ExecutionContext): number =>
  parsePlanetId(
    (ctx.switchToHttp().getRequest<{ params: Record<string, string | undefined> }>().params ?? {}).planetId ?? '',
  ),
);

/** The planet id the path's text names; a 400 for anything else. */
export function parsePlanetId(raw: string): number {
  const id = POSITIVE_INTEGER.test(raw) ? Number(raw) : NaN;
  if (!(id <= INT4_MAX)) {
    throw new ValidationFailedError([
      { field: 'planetId', message: `planetId must be an integer from 1 to ${INT4_MAX}` },
    ]);
  }
  return id;
}

/** The answer to a planetId that is not one, for the OpenAPI examples. */
export const INVALID_PLANET_ID = refusalOf(() => parsePlanetId('0'));

/** For @ApiParam: the decorator above is invisible to Swagger. */
export const PLANET_ID_PARAM: ApiParamOptions = {
  name: 'planetId',
  description: 'The ID of the planet',
  schema: { type: 'integer', format: 'int64', minimum: 1, maximum: INT4_MAX, examples: [1] },
};

/**
 * Documents a route's `planetId`: the parameter, its 400, and the 404 of no such planet.
 * List it above the route's own @ApiProblems: of two examples of one problem type, the
 * route's own is kept.
 */
export const ApiPlanetId = () =>
  applyDecorators(
    ApiParam(PLANET_ID_PARAM),
    ApiProblems(
      { types: [VALIDATION], description: 'planetId is not a positive integer.', examples: [INVALID_PLANET_ID] },
      { types: [NOT_FOUND], description: 'No planet with this id.', examples: [() => new PlanetNotFoundError(42)] },
    ),
  );
