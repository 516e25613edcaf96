import { readFileSync } from 'node:fs';

import { OpenApiResponseValidator } from '../support/openapi-validator';

const unavailable = { type: '/problems/unavailable', title: 'Service unavailable', status: 503 };

/** The checker that every e2e response goes through must itself be able to fail. */
const document = {
  openapi: '3.1.0',
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          '404': {
            content: {
              'application/problem+json': {
                schema: { $ref: '#/components/schemas/Problem' },
                examples: { 'not-found': { value: { type: '/problems/not-found', title: 'Not found', status: 404 } } },
              },
            },
          },
        },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    },
    '/busy': {
      get: {
        responses: {
          '304': { description: 'not modified', headers: { ETag: {} } },
          '503': {
            headers: { 'Retry-After': {} },
            content: {
              'application/problem+json': {
                schema: { $ref: '#/components/schemas/Problem' },
                examples: { unavailable: { value: unavailable } },
              },
            },
          },
        },
      },
      put: { responses: { '304': { description: 'not modified' }, '503': { description: 'busy' } } },
    },
  },
  'x-problem-types': [
    { type: '/problems/not-found', title: 'Not found', status: 404 },
    { type: '/problems/method-not-allowed', title: 'Method not allowed', status: 405 },
  ],
  components: {
    responses: { MethodNotAllowed: { headers: { Allow: {} } } },
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'createdAt'],
        properties: {
          id: { type: 'integer' },
          createdAt: { type: 'string', format: 'date-time' },
          note: { type: ['string', 'null'] },
        },
      },
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status'],
        properties: { type: { type: 'string' }, title: { type: 'string' }, status: { type: 'number' } },
      },
    },
  },
};

const json = (statusCode: number, body: unknown, type = 'application/json', headers: Record<string, string> = {}) => ({
  statusCode,
  headers: { 'content-type': `${type}; charset=utf-8`, ...headers },
  body: JSON.stringify(body),
});
const PROBLEM = 'application/problem+json';
const notFound = { type: '/problems/not-found', title: 'Not found', status: 404 };
const wrongMethod = { type: '/problems/method-not-allowed', title: 'Method not allowed', status: 405 };

describe('OpenApiResponseValidator', () => {
  const validator = new OpenApiResponseValidator(document);

  it('accepts responses that match the document', () => {
    expect(() =>
      validator.check('GET', '/things/1', json(200, { id: 1, createdAt: '2026-11-22T10:15:00.000Z', note: null })),
    ).not.toThrow();
    expect(() => validator.check('GET', '/things/1?x=1', json(404, notFound, PROBLEM))).not.toThrow();
    expect(() =>
      validator.check(
        'GET',
        '/things/1',
        json(404, { ...notFound, type: 'https://api.example.org/problems/not-found' }, PROBLEM),
      ),
    ).not.toThrow();
    expect(() => validator.check('DELETE', '/things/1', { statusCode: 204, headers: {}, body: '' })).not.toThrow();
    expect(() => validator.check('GET', '/nowhere', json(404, notFound, PROBLEM))).not.toThrow();
    expect(() =>
      validator.check('PUT', '/things/1', json(405, wrongMethod, PROBLEM, { allow: 'GET, HEAD, DELETE' })),
    ).not.toThrow();
  });

  it('fails a problem whose type or title the operation does not declare for its status, or a type that is no /problems/ URI', () => {
    expect(() =>
      validator.check('GET', '/things/1', json(404, { ...notFound, type: '/problems/gone' }, PROBLEM)),
    ).toThrow(/is not among the examples/);
    expect(() => validator.check('GET', '/things/1', json(404, { ...notFound, title: 'Missing' }, PROBLEM))).toThrow(
      /is not among the examples/,
    );
    expect(() => validator.check('GET', '/nowhere', json(404, { ...notFound, title: 'Missing' }, PROBLEM))).toThrow(
      /is not among registered/,
    );
    expect(() =>
      validator.check(
        'GET',
        '/things/1',
        json(404, { ...notFound, type: 'https://errors.example/not-found' }, PROBLEM),
      ),
    ).toThrow(/not a \/problems\/<slug> URI/);
  });

  it('fails a 405 whose Allow is not the methods the document has for the path, or for a path it does not have', () => {
    expect(() => validator.check('PUT', '/things/1', json(405, wrongMethod, PROBLEM, { allow: 'GET, HEAD' }))).toThrow(
      /Allow is/,
    );
    expect(() => validator.check('PUT', '/elsewhere', json(405, wrongMethod, PROBLEM, { allow: 'GET' }))).toThrow(
      /does not have/,
    );
  });

  it('fails a Retry-After or ETag the response does not declare, and a 503 or 304 without the one it needs', () => {
    const etag = { etag: '"a"' };
    expect(() => validator.check('GET', '/busy', { statusCode: 304, headers: etag, body: '' })).not.toThrow();
    expect(() =>
      validator.check('GET', '/busy', json(503, unavailable, PROBLEM, { 'retry-after': '5' })),
    ).not.toThrow();
    expect(() => validator.check('GET', '/busy', { statusCode: 304, headers: {}, body: '' })).toThrow(/must send etag/);
    expect(() => validator.check('GET', '/busy', json(503, unavailable, PROBLEM))).toThrow(/must send retry-after/);
    expect(() => validator.check('PUT', '/busy', { statusCode: 304, headers: etag, body: '' })).toThrow(
      /etag was sent, but the document does not declare it/,
    );
    expect(() =>
      validator.check('PUT', '/busy', { statusCode: 503, headers: { 'retry-after': '5' }, body: '' }),
    ).toThrow(/retry-after was sent/);
    expect(() => validator.check('GET', '/things/1', json(404, notFound, PROBLEM, { 'retry-after': '5' }))).toThrow(
      /retry-after was sent, but the document does not declare it/,
    );
  });

  it('fails an X-Request-ID the response does not declare, and a 405 the document does not declare', () => {
    const id = { 'x-request-id': '3f8e0b7c' };
    expect(() => validator.check('DELETE', '/things/1', { statusCode: 204, headers: id, body: '' })).toThrow(
      /x-request-id was sent, but the document does not declare it/,
    );
    const declared = structuredClone(document);
    (declared.paths['/things/{id}'].delete.responses['204'] as { headers?: object }).headers = { 'X-Request-ID': {} };
    expect(() =>
      new OpenApiResponseValidator(declared).check('DELETE', '/things/1', { statusCode: 204, headers: id, body: '' }),
    ).not.toThrow();
    const undeclared = { ...document, components: { schemas: document.components.schemas } };
    expect(() =>
      new OpenApiResponseValidator(undeclared).check(
        'PUT',
        '/things/1',
        json(405, wrongMethod, PROBLEM, { allow: 'GET, HEAD, DELETE' }),
      ),
    ).toThrow(/declares no 405/);
  });

  it('checks the path the server receives: dot segments resolved, as a client sends them', () => {
    const thing = json(200, { id: 1, createdAt: '2026-11-22T10:15:00.000Z' });
    expect(() => validator.check('GET', '/things/x/../1', thing)).not.toThrow();
    expect(() => validator.check('GET', '/things/%2e/1?x=1', thing)).not.toThrow();
    expect(() =>
      validator.check('PUT', '/things/./1', json(405, wrongMethod, PROBLEM, { allow: 'GET, HEAD, DELETE' })),
    ).not.toThrow();
    // Unresolved, `/things/x/1` is no path of the document.
    expect(() => validator.check('GET', '/things/x/1', thing)).toThrow(/no such operation/);
  });

  it('fails a status the operation does not declare', () => {
    expect(() =>
      validator.check('GET', '/things/1', json(201, { id: 1, createdAt: '2026-11-22T10:15:00.000Z' })),
    ).toThrow(/status not declared/);
  });

  it('fails a body that does not match the schema', () => {
    expect(() => validator.check('GET', '/things/1', json(200, { id: 'one', createdAt: 'yesterday' }))).toThrow(
      /does not match/,
    );
  });

  it('fails an undeclared content type', () => {
    expect(() => validator.check('GET', '/things/1', json(404, notFound))).toThrow(
      /content type "application\/json" not declared/,
    );
  });

  it('fails a body where none is declared, and an operation that is not documented', () => {
    expect(() => validator.check('DELETE', '/things/1', json(204, { ok: true }))).toThrow(/declares none/);
    expect(() => validator.check('POST', '/things/1', json(201, {}))).toThrow(/no such operation/);
  });
});

describe('OpenApiResponseValidator on the committed openapi.json', () => {
  const validator = new OpenApiResponseValidator(JSON.parse(readFileSync('openapi.json', 'utf8')));
  const region = {
    id: '5d7c2f1a-3b4e-4a6f-8c9d-0e1f2a3b4c5d',
    name: 'Utrecht',
    createdAt: '2026-11-22T10:15:00.000Z',
    updatedAt: '2026-11-22T10:15:00.000Z',
    apiKeys: [],
  };

  it('accepts a true response of a real route', () => {
    expect(() => validator.check('GET', '/auth/regions/me', json(200, region))).not.toThrow();
  });

  it('fails a deliberately wrong status, and a body missing a required field', () => {
    expect(() => validator.check('GET', '/auth/regions/me', json(201, region))).toThrow(
      /status not declared for GET \/auth\/regions\/me/,
    );
    expect(() =>
      validator.check('DELETE', '/auth/region/api-keys/5d7c2f1a-3b4e-4a6f-8c9d-0e1f2a3b4c5d', json(200, {})),
    ).toThrow(/status not declared/);
    const { name: _name, ...nameless } = region;
    expect(() => validator.check('GET', '/auth/regions/me', json(200, nameless))).toThrow(
      /must have required property 'name'/,
    );
  });
});
