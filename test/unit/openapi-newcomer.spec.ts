import { existsSync, readFileSync } from 'node:fs';

// The committed document, which an e2e test keeps equal to the one the server builds.
const doc = JSON.parse(readFileSync('openapi.json', 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const operations: { method: string; path: string; tags: string[] }[] = Object.entries(
  doc.paths as Record<string, Record<string, { tags?: string[] }>>,
).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({ method, path, tags: item[method].tags ?? [] })),
);

describe('the OpenAPI document, as a newcomer reads it at /docs', () => {
  it('declares its tags in the order a newcomer meets them (Swagger UI shows them so), each described', () => {
    const tags = doc.tags as { name: string; description?: string }[];
    expect(tags.map(({ name }) => name)).toEqual([
      'Region API keys',
      'Authentication',
      'Planets',
      'Celestial Bodies',
      'Problems',
      'Health',
    ]);
    for (const { name, description } of tags) {
      expect({ name, description }).toEqual({ name, description: expect.stringMatching(/^[A-Z].{20,300}\.$/) });
    }
  });

  it('declares every tag an operation uses, and uses every tag it declares', () => {
    const declared = (doc.tags as { name: string }[]).map(({ name }) => name).sort();
    const used = [...new Set(operations.flatMap(({ tags }) => tags))].sort();
    expect(used).toEqual(declared);
    expect(operations.filter(({ tags }) => tags.length === 0)).toEqual([]);
  });

  it('opens with how to get a first region key and make a first call, then as a user', () => {
    const description = doc.info.description as string;
    const start = description.indexOf('## Getting started');
    expect(start).toBeGreaterThan(-1);
    expect(start).toBeLessThan(description.indexOf('## Conventions'));
    const intro = description.slice(start, description.indexOf('## Conventions'));
    for (const words of [
      'region create',
      'INITIAL_REGION_API_KEY',
      'X-API-Key',
      'Authorize',
      'GET /auth/regions/me',
      'POST /user/signup',
      'POST /auth/token',
      'GET /me',
      'Bearer',
      'docs/api.md',
    ]) {
      expect(intro).toContain(words);
    }
    expect(intro.indexOf('GET /auth/regions/me')).toBeLessThan(intro.indexOf('POST /user/signup'));
    expect(existsSync('docs/api.md')).toBe(true);
  });

  it('names only routes the document has', () => {
    const named = [...(doc.info.description as string).matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`/g)];
    expect(named.length).toBeGreaterThanOrEqual(4);
    for (const [, method, path] of named) {
      expect({ route: `${method} ${path}`, documented: Boolean(doc.paths[path]?.[method.toLowerCase()]) }).toEqual({
        route: `${method} ${path}`,
        documented: true,
      });
    }
  });
});
