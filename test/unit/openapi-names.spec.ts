import { readFileSync } from 'node:fs';

// The committed document, which an e2e test keeps equal to the one the server builds.
const doc = JSON.parse(readFileSync('openapi.json', 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const operations: { where: string; operationId: unknown }[] = Object.entries(
  doc.paths as Record<string, Record<string, { operationId?: unknown }>>,
).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({
    where: `${method} ${path}`,
    operationId: item[method].operationId,
  })),
);

describe('names in the OpenAPI document, as a generated client calls things', () => {
  it('has operations to check', () => {
    expect(operations.length).toBeGreaterThan(15);
  });

  it('gives every operation a camelCase operationId of its own, never a framework default', () => {
    for (const { where, operationId } of operations) {
      expect({ where, operationId }).toEqual({ where, operationId: expect.stringMatching(/^[a-z][A-Za-z]+$/) });
      expect(String(operationId)).not.toContain('Controller_');
    }
    const ids = operations.map(({ operationId }) => operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('names no schema after a class suffix (…Dto)', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((name) => /dto$/i.test(name))).toEqual([]);
    expect(names).toEqual(
      expect.arrayContaining([
        'Problem',
        'FieldError',
        'ApiKey',
        'Region',
        'ApiKeyInput',
        'CreatedApiKey',
        'RollApiKeyInput',
        'RolledApiKey',
      ]),
    );
  });
});
