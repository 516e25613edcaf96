import { ApiSchema } from '@nestjs/swagger';

import { ApiInt64, ApiUri } from '../swagger';
import type { OffsetPageQueryDto } from './page-query';

@ApiSchema({ name: 'PageMeta' })
export class PageMetaDto {
  /** @example 10 */
  @ApiInt64()
  limit: number;

  /** @example 0 */
  @ApiInt64()
  offset: number;

  /** @example 100 */
  @ApiInt64()
  total: number;

  /**
   * The URI of the next page; null on the last page.
   * @example https://api.example.org/planets?limit=10&offset=10
   */
  @ApiUri({ nullable: true })
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
 * `url` (absolute, as absoluteUrl makes it): the response body carries the meta beside its `data`, the reply the headers.
 * `meta.next` asks for the next page of the same list: the query's other fields (a list's
 * filters, as the validated query DTO holds them) come along, so that a client following it
 * keeps its filters.
 */
export function offsetPage(url: string, query: OffsetPageQueryDto, total: number): OffsetPage {
  const { limit, offset } = query;
  return {
    meta: {
      limit,
      offset,
      total,
      next: offset + limit < total ? `${url}?${queryString(query, offset + limit)}` : null,
    },
    headers: {
      'X-Pagination-Total': String(total),
      'X-Pagination-Page': String(Math.floor(offset / limit) + 1),
      'X-Pagination-Per-Page': String(limit),
    },
  };
}

/**
 * `limit` and `offset` first, then every other field of the query that has a value (a default
 * the client left out too: the same list either way), by name, so that one list's links are
 * spelled alike whatever order the client sent; each name and value percent-encoded. An array is one parameter per item, as the query string parser reads it
 * back; a Date is its ISO text.
 */
function queryString(query: OffsetPageQueryDto, offset: number): string {
  const parts = [`limit=${query.limit}`, `offset=${offset}`];
  const fields = query as unknown as Record<string, unknown>;
  for (const name of Object.keys(fields).sort()) {
    if (name === 'limit' || name === 'offset') continue;
    const value = fields[name];
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (item === undefined || item === null) continue;
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(queryValue(name, item))}`);
    }
  }
  return parts.join('&');
}

function queryValue(name: string, value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint'
  ) {
    return String(value);
  }
  // A query string parameter is text: a field that holds an object was not read from one.
  throw new TypeError(`offsetPage: query field "${name}" holds an object, which a link cannot carry`);
}
