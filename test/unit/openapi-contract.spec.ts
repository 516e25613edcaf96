import { readFileSync } from 'node:fs';

import { isWellFormedApiKey } from '../../src/common/auth/api-key-format';
import { previewApiKey } from '../../src/region-keys/api-key-codec';

// The committed document, which an e2e test keeps equal to the one the server builds, and
// the client docs written beside it.
const doc = JSON.parse(readFileSync('openapi.json', 'utf8'));
const DOCS = ['openapi.json', 'README.md', 'docs/api.md', 'docs/operations.md', 'SECURITY.md'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Response {
  headers?: Record<string, unknown>;
}
interface Operation {
  parameters?: { in: string; name: string }[];
  responses: Record<string, Response>;
}

const operations: { where: string; operation: Operation }[] = Object.entries(
  doc.paths as Record<string, Record<string, Operation>>,
).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => ({
    where: `${method.toUpperCase()} ${path}`,
    operation: item[method],
  })),
);

describe('the example keys of the docs and the document', () => {
  const texts = DOCS.map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  const keys = texts.flatMap(({ file, text }) =>
    [...text.matchAll(/rk_(?:test_)?[0-9A-Za-z]{12,}/g)].map(([key]) => ({ file, key })),
  );

  it('are keys the service could have issued, checksum and length included', () => {
    expect(keys.length).toBeGreaterThan(0);
    for (const { file, key } of keys) {
      const environment = key.startsWith('rk_test_') ? 'sandbox' : 'live';
      expect({ file, key, wellFormed: isWellFormedApiKey(key, environment) }).toEqual({ file, key, wellFormed: true });
    }
  });

  it('are previewed as the service previews them', () => {
    const previews = new Map(keys.map(({ key }) => [key.slice(0, 8), previewApiKey(key)]));
    // A preview that begins as an example key does must be that key's; others are of keys not shown.
    const shown = texts.flatMap(({ file, text }) =>
      [...text.matchAll(/rk_[0-9A-Za-z_]{5}\u2026[0-9A-Za-z]{4}/g)]
        .filter(([preview]) => previews.has(preview.slice(0, 8)))
        .map(([preview]) => ({ file, preview })),
    );
    expect(shown.length).toBeGreaterThan(0);
    for (const { file, preview } of shown) {
      expect({ file, preview }).toEqual({ file, preview: previews.get(preview.slice(0, 8)) });
    }
  });
});

describe('what the document declares besides each operation', () => {
  it('declares X-Request-ID on every response, once, as a component', () => {
    expect(doc.components.headers['X-Request-ID']).toMatchObject({ schema: { type: 'string' } });
    const responses = [
      ...operations.flatMap(({ where, operation }) =>
        Object.entries(operation.responses).map(([status, response]) => ({ where: `${where} ${status}`, response })),
      ),
      ...Object.entries(doc.components.responses as Record<string, Response>).map(([name, response]) => ({
        where: name,
        response,
      })),
    ];
    for (const { where, response } of responses) {
      expect({ where, header: response.headers?.['X-Request-ID'] }).toEqual({
        where,
        header: { $ref: '#/components/headers/X-Request-ID' },
      });
    }
  });

  it('declares the 405 of a known path asked with another method, with Allow', () => {
    const response = doc.components.responses.MethodNotAllowed;
    expect(response.headers.Allow).toMatchObject({ schema: { type: 'string' } });
    expect(response.content['application/problem+json']).toMatchObject({
      schema: { $ref: '#/components/schemas/Problem' },
      examples: { 'method-not-allowed': { value: { type: '/problems/method-not-allowed', status: 405 } } },
    });
    expect(doc.info.description).toContain('#/components/responses/MethodNotAllowed');
  });

  it('declares If-None-Match on every operation that answers 304', () => {
    const conditional = operations.filter(({ operation }) => operation.responses['304']);
    expect(conditional.map(({ where }) => where)).toContain('GET /planets/{planetId}/image');
    for (const { where, operation } of conditional) {
      const names = (operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      expect({ where, names }).toEqual({ where, names: expect.arrayContaining(['If-None-Match']) });
    }
  });

  it('lists the known problem types in Problem.type, and keeps it open to later ones', () => {
    const { type } = doc.components.schemas.Problem.properties;
    expect(type.anyOf).toEqual([
      expect.objectContaining({
        type: 'string',
        enum: (doc['x-problem-types'] as { type: string }[]).map((t) => t.type),
      }),
      expect.objectContaining({ type: 'string' }),
    ]);
    expect(type.anyOf[1].enum).toBeUndefined();
  });

  it('bounds a problem: at most 20 errors, each field and message of bounded length', () => {
    const { Problem, FieldError } = doc.components.schemas;
    expect(Problem.properties.errors.maxItems).toBe(20);
    expect(FieldError.properties.field.maxLength).toBe(200);
    expect(FieldError.properties.message.maxLength).toBe(300);
  });
});

describe('the client docs', () => {
  const section = (() => {
    const text = readFileSync('docs/api.md', 'utf8');
    const start = text.indexOf('## Generated clients');
    const end = text.indexOf('\n## ', start + 1);
    return text.slice(start, end < 0 ? undefined : end);
  })();

  it("give the settings of both generators that make clean clients: the project's script, and Hey API's import extension", () => {
    expect(section).toContain('`scripts/generate-client-types.mjs`');
    const script = readFileSync('scripts/generate-client-types.mjs', 'utf8');
    // Each choice the script makes is told: binary as Blob, defaults optional.
    for (const [setting, told] of [
      ["format !== 'binary'", '`Blob`'],
      ['defaultNonNullable: false', 'a field with a default stays optional to send'],
    ]) {
      expect({ setting, inScript: script.includes(setting), told: section.includes(told) }).toEqual({
        setting,
        inScript: true,
        told: true,
      });
    }
    expect(section).toContain("importFileExtension: '.js'");
  });
});
