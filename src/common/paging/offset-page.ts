import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import type { OffsetPageQueryDto } from './page-query';

@ApiSchema({ name: 'PageMeta' })
export class PageMetaDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 10 })
  limit: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 0 })
  offset: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 100 })
  total: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The path of the next page; null on the last page.',
    example: '/planets?limit=10&offset=10',
  })
  next: string | null;
}

/** The headers of an offset page, as documented on its response (`headers: PAGINATION_HEADERS`). */
export const PAGINATION_HEADERS = {
  'X-Pagination-Total': { description: 'Total number of items available', schema: { type: 'integer', example: 1000 } },
  'X-Pagination-Page': { description: 'Current page number (from 1)', schema: { type: 'integer', example: 1 } },
  'X-Pagination-Per-Page': { description: 'Number of items per page', schema: { type: 'integer', example: 10 } },
} as const;

export interface OffsetPage {
  meta: PageMetaDto;
  headers: Record<keyof typeof PAGINATION_HEADERS, string>;
}

/**
 * The meta and headers of the page that `query` asked for, out of `total` items, listed at
 * `path`: the response body carries the meta beside its `data`, the reply the headers.
 */
export function offsetPage(path: string, { limit, offset }: OffsetPageQueryDto, total: number): OffsetPage {
  return {
    meta: {
      limit,
      offset,
      total,
      next: offset + limit < total ? `${path}?limit=${limit}&offset=${offset + limit}` : null,
    },
    headers: {
      'X-Pagination-Total': String(total),
      'X-Pagination-Page': String(Math.floor(offset / limit) + 1),
      'X-Pagination-Per-Page': String(limit),
    },
  };
}
