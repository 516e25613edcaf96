import { offsetPage, OffsetPageQueryDto } from '../../src/common/paging';

/** A list's query with filters, as the validation pipe hands it over: the DTO, its fields transformed. */
class FilteredQuery extends OffsetPageQueryDto {
  name?: string;
  type?: string;
  tags?: string[];
  since?: Date;
  habitable?: boolean;
  minMass?: number;
}

const filtered = (fields: Partial<FilteredQuery>): FilteredQuery =>
  Object.assign(new FilteredQuery(), { limit: 10, offset: 0 }, fields);

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
    expect(offsetPage('/things', filtered({ name: 'Mars' }), 10).meta.next).toBeNull();
  });

  it('numbers a page that starts between page boundaries by the page its first item is on', () => {
    expect(offsetPage('/things', { limit: 10, offset: 15 }, 100).headers['X-Pagination-Page']).toBe('2');
  });

  describe('the next page of a filtered list', () => {
    it("keeps the list's filters, after limit and offset, by name whatever order the query holds them in", () => {
      const query = filtered({ type: 'gas giant', name: 'Jupiter', offset: 10 });
      expect(offsetPage('/planets', query, 100).meta.next).toBe(
        '/planets?limit=10&offset=20&name=Jupiter&type=gas%20giant',
      );
      const reordered = Object.assign(new FilteredQuery(), {
        name: 'Jupiter',
        type: 'gas giant',
        offset: 10,
        limit: 10,
      });
      expect(offsetPage('/planets', reordered, 100).meta.next).toBe(offsetPage('/planets', query, 100).meta.next);
    });

    it('percent-encodes names and values, so a value cannot add or change a parameter', () => {
      const next = offsetPage('/planets', filtered({ name: 'a&offset=0 +b=c#d/é?' }), 100).meta.next!;
      expect(next).toBe('/planets?limit=10&offset=10&name=a%26offset%3D0%20%2Bb%3Dc%23d%2F%C3%A9%3F');
      const params = new URL(next, 'http://localhost').searchParams;
      expect([...params]).toEqual([
        ['limit', '10'],
        ['offset', '10'],
        ['name', 'a&offset=0 +b=c#d/é?'],
      ]);
    });

    it('writes an array as one parameter per item, in its order, and a Date, a boolean and a number as text', () => {
      const query = filtered({
        tags: ['rocky', 'ringed world'],
        since: new Date('2026-11-22T10:15:00.000Z'),
        habitable: false,
        minMass: 0.5,
      });
      const params = new URL(offsetPage('/planets', query, 100).meta.next!, 'http://localhost').searchParams;
      expect([...params]).toEqual([
        ['limit', '10'],
        ['offset', '10'],
        ['habitable', 'false'],
        ['minMass', '0.5'],
        ['since', '2026-11-22T10:15:00.000Z'],
        ['tags', 'rocky'],
        ['tags', 'ringed world'],
      ]);
    });

    it('leaves out the filters that have no value', () => {
      const query = filtered({ name: undefined, tags: [], type: null as unknown as string, minMass: 0 });
      expect(offsetPage('/planets', query, 100).meta.next).toBe('/planets?limit=10&offset=10&minMass=0');
    });

    it('refuses a field that holds an object, which no query string parameter could have made', () => {
      const query = Object.assign(filtered({}), { near: { x: 1 } });
      expect(() => offsetPage('/planets', query, 100)).toThrow(/query field "near" holds an object/);
    });
  });
});
