import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageLimit, PageOffset } from '../../common/paging';

/**
 * The query of GET /planets. The Galaxy's `limit` has no maximum, so a larger one is served
 * as MAX_PAGE_SIZE (meta.limit and X-Pagination-Per-Page say so, and meta.next goes on from
 * there) rather than refused: a Galaxy client asking for 1000 still pages through them all.
 */
export class PlanetPageQueryDto {
  @PageLimit({
    default: DEFAULT_PAGE_SIZE,
    max: MAX_PAGE_SIZE,
    clamp: true,
    description: `The number of items to return, from 1; more than ${MAX_PAGE_SIZE} is served as ${MAX_PAGE_SIZE} (meta.limit and X-Pagination-Per-Page give the limit served).`,
  })
  limit: number = DEFAULT_PAGE_SIZE;

  @PageOffset()
  offset: number = 0;
}
