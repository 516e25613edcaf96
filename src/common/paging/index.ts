export { type OffsetPage, offsetPage, PageMetaDto, PAGINATION_HEADERS } from './offset-page';
export {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  OffsetPageQueryDto,
  PageLimit,
  type PageLimitOptions,
  PageOffset,
} from './page-query';
