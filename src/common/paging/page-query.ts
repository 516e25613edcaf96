import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

import { INT4_MAX } from '../../database';
import { toInt } from '../validation';

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export interface PageLimitOptions {
  /** The page size when the query has no `limit`; give the property the same initial value. */
  default: number;
  max: number;
  description: string;
  /**
   * Serve a larger `limit` as `max`, as GitHub does with per_page, rather than refuse it: for
   * a list whose clients were written for a document that sets no maximum. The page's meta
   * and headers carry the limit served.
   */
  clamp?: boolean;
}

/** A whole number above `max` (of any length) becomes `max`; anything else as toInt. */
const clampedInt =
  (max: number) =>
  ({ value }: { value: unknown }): unknown => {
    const number = toInt({ value });
    return typeof number === 'number' && number > max ? max : number;
  };

/**
 * The `limit` query parameter of a list, offset or cursor paged: an integer from 1 to `max`
 * (with `clamp`, from 1, served as at most `max`).
 * The decorators are listed in the order they are applied (bottom-up, as written above a
 * property), which is the order of a failing value's messages.
 */
export const PageLimit = ({ default: byDefault, max, description, clamp = false }: PageLimitOptions) =>
  applyDecorators(
    ...(clamp ? [] : [Max(max)]),
    Min(1),
    IsInt(),
    Transform(clamp ? clampedInt(max) : toInt),
    ApiProperty({
      required: false,
      type: 'integer',
      minimum: 1,
      ...(clamp ? {} : { maximum: max }),
      default: byDefault,
      description,
    }),
  );

/** The `offset` query parameter of a list paged by position: up to the int4 maximum, the most rows a table with serial ids can hold. */
export const PageOffset = () =>
  applyDecorators(
    Max(INT4_MAX),
    Min(0),
    IsInt(),
    Transform(toInt),
    ApiProperty({
      required: false,
      type: 'integer',
      minimum: 0,
      maximum: INT4_MAX,
      default: 0,
      description: 'The number of items to skip before starting to collect the result set',
    }),
  );

/** `limit` and `offset` of a list paged by position; a list with filters extends it. */
export class OffsetPageQueryDto {
  @PageLimit({ default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE, description: 'The number of items to return' })
  limit: number = DEFAULT_PAGE_SIZE;

  @PageOffset()
  offset: number = 0;
}
