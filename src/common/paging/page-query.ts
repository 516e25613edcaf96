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
}

/**
 * The `limit` query parameter of a list, offset or cursor paged: an integer from 1 to `max`.
 * The decorators are listed in the order they are applied (bottom-up, as written above a
 * property), which is the order of a failing value's messages.
 */
export const PageLimit = ({ default: byDefault, max, description }: PageLimitOptions) =>
  applyDecorators(
    Max(max),
    Min(1),
    IsInt(),
    Transform(toInt),
    ApiProperty({ required: false, type: 'integer', minimum: 1, maximum: max, default: byDefault, description }),
  );

/**
 * `limit` and `offset` of a list paged by position; a list with filters extends it. The
 * offset goes up to the int4 maximum, the most rows a table with serial ids can hold.
 */
export class OffsetPageQueryDto {
  @PageLimit({ default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE, description: 'The number of items to return' })
  limit: number = DEFAULT_PAGE_SIZE;

  @ApiProperty({
    required: false,
    type: 'integer',
    minimum: 0,
    maximum: INT4_MAX,
    default: 0,
    description: 'The number of items to skip before starting to collect the result set',
  })
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(INT4_MAX)
  offset: number = 0;
}
