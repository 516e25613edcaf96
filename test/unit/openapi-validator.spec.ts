import { readFileSync } from 'node:fs';
import { OpenApiResponseValidator } from '../support/openapi-validator';

/** The checker that every e2e response goes through must itself be able to fail. */
const document = {
  openapi: '3.1.0',
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          '404': { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
        },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'createdAt'],
        properties: { id: { type: 'integer' }, createdAt: { type: 'string', format: 'date-time' }, note: { type: ['string', 'null'] } },
      },
      Problem: { type: 'object', required: ['type', 'status'], properties: { type: { type: 'string' }, status: { type: 'number' } } },
    },
  },
};

const json = (statusCode: number, body: unknown, type = 'application/json') => ({
  statusCode,
  headers: { 'content-type': `${type}; charset=utf-8` },
  body: JSON.stringify(body),
});

describe('OpenApiResponseValidator', () => {
  const validator = new OpenApiResponseValidator(document);

  it('accepts responses that match the document', () => {
    expect(() => validator.check('GET', '/things/1', json(200, { id: 1, createdAt: '2026-11-22T10:15:00.000Z', note: null }))).not.toThrow();
    expect(() => validator.check('GET', '/things/1?x=1', json(404, { type: 'x', status: 404 }, 'application/problem+json'))).not.toThrow();
    expect(() => validator.check('DELETE', '/things/1', { statusCode: 204, headers: {}, body: '' })).not.toThrow();
    expect(() => validator.check('GET', '/nowhere', json(404, { type: 'x', status: 404 }, 'application/problem+json'))).not.toThrow();
  });

  it('fails a status the operation does not declare', () => {
    expect(() => validator.check('GET', '/things/1', json(201, { id: 1, createdAt: '2026-11-22T10:15:00.000Z' }))).toThrow(/status not declared/);
  });

  it('fails a body that does not match the schema', () => {
    expect(() => validator.check('GET', '/things/1', json(200, { id: 'one', createdAt: 'yesterday' }))).toThrow(/does not match/);
  });

  it('fails an undeclared content type', () => {
    expect(() => validator.check('GET', '/things/1', json(404, { type: 'x', status: 404 }))).toThrow(/content type "application\/json" not declared/);
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
    expect(() => validator.check('GET', '/auth/regions/me', json(201, region))).toThrow(/status not declared for GET \/auth\/regions\/me/);
    expect(() => validator.check('DELETE', '/auth/region/api-keys/5d7c2f1a-3b4e-4a6f-8c9d-0e1f2a3b4c5d', json(200, {}))).toThrow(/status not declared/);
    const { name: _name, ...nameless } = region;
    expect(() => validator.check('GET', '/auth/regions/me', json(200, nameless))).toThrow(/must have required property 'name'/);
  });
});
