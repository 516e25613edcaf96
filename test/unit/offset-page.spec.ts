import { offsetPage } from '../../src/common/paging';

describe('offsetPage', () => {
  it('points to the next page while items remain', () => {
    expect(offsetPage('/things', { limit: 10, offset: 20 }, 35)).toEqual({
      meta: { limit: 10, offset: 20, total: 35, next: '/things?limit=10&offset=30' },
      headers: { 'X-Pagination-Total': '35', 'X-Pagination-Page': '3', 'X-Pagination-Per-Page': '10' },
    });
  });

  it('has no next page when the page reaches the end', () => {
    expect(offsetPage('/things', { limit: 10, offset: 30 }, 40).meta.next).toBeNull();
    expect(offsetPage('/things', { limit: 10, offset: 50 }, 40).meta.next).toBeNull();
    expect(offsetPage('/things', { limit: 10, offset: 0 }, 0).meta.next).toBeNull();
  });

  it('numbers a page that starts between page boundaries by the page its first item is on', () => {
    expect(offsetPage('/things', { limit: 10, offset: 15 }, 100).headers['X-Pagination-Page']).toBe('2');
  });
});
