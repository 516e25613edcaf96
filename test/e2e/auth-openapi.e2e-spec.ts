import type { InjectOptions } from 'light-my-request';

import { newRegion, startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser } from '../support/users';

let t: TestApp;
let doc: any;

beforeAll(async () => {
  t = await startTestApp({ LOGIN_FAILURE_LIMIT: '2', SIGNUP_RATE_LIMIT: '6' });
  doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
});
afterAll(async () => t?.close());

const AREA_B = [
  ['post', '/user/signup', ['201', '400', '409', '413', '415', '422', '429', '503']],
  ['post', '/auth/token', ['201', '400', '401', '413', '415', '429', '503']],
  ['get', '/me', ['200', '400', '401', '429', '503']],
] as const;

describe('the OpenAPI document for users and tokens', () => {
  it('declares basicAuth and bearerAuth (JWT) next to apiKeyHeader', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
  });

  it('tags the routes "Authentication", names them as Galaxy does, and lists every status with a problem schema for errors', () => {
    const operationIds = { '/user/signup': 'createUser', '/auth/token': 'getToken', '/me': 'getMe' };
    for (const [method, path, statuses] of AREA_B) {
      const operation = doc.paths[path][method];
      expect(operation.tags).toEqual(['Authentication']);
      expect(operation.operationId).toBe(operationIds[path]);
      expect(Object.keys(operation.responses).sort()).toEqual([...statuses].sort());
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const media = operation.responses[status].content['application/problem+json'];
        expect(media.schema).toEqual({ $ref: '#/components/schemas/Problem' });
        const examples = Object.values<{ value: { status: number } }>(media.examples);
        expect(examples.length).toBeGreaterThan(0);
        for (const example of examples) expect(example.value.status).toBe(Number(status));
      }
      expect(operation.responses['429'].headers).toEqual(
        expect.objectContaining({
          'Retry-After': expect.anything(),
          'X-RateLimit-Limit': expect.anything(),
          'X-RateLimit-Remaining': expect.anything(),
        }),
      );
    }
  });

  it('marks sign-up and token issue public, and /me as Basic or Bearer (either one)', () => {
    expect(doc.paths['/user/signup'].post.security).toEqual([]);
    expect(doc.paths['/auth/token'].post.security).toEqual([]);
    expect(doc.paths['/me'].get.security).toEqual([{ basicAuth: [] }, { bearerAuth: [] }]);
  });

  it('describes User as { id: integer, name: string|null }, and the password as write-only with examples', () => {
    const { schemas } = doc.components;
    expect(schemas.User).toEqual({
      type: 'object',
      properties: {
        id: expect.objectContaining({ type: 'integer' }),
        name: expect.objectContaining({ type: ['string', 'null'] }),
      },
      required: ['id', 'name'],
    });
    for (const name of ['NewUser', 'Credentials']) {
      expect(schemas[name].properties.password).toMatchObject({
        type: 'string',
        writeOnly: true,
        maxLength: 72,
        example: expect.any(String),
      });
      expect(schemas[name].properties.email).toMatchObject({
        format: 'email',
        maxLength: 254,
        example: expect.any(String),
      });
      expect(schemas[name].required).toEqual(['email', 'password']);
    }
    expect(doc.paths['/user/signup'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NewUser',
    });
    expect(doc.paths['/auth/token'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Credentials',
    });
    expect(doc.paths['/auth/token'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Token',
    });
    expect(doc.paths['/me'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/User',
    });
  });

  it('matches what the server sends, for every status of every route', async () => {
    const seen = new Set<string>();
    // t.request checks each response against the document; this records which were seen.
    const send = async (options: InjectOptions) => {
      const res = await t.request(options);
      const method = String(options.method).toLowerCase();
      const path = String(options.url);
      const status = String(res.statusCode);
      seen.add(`${method} ${path} ${status}`);
      return res;
    };

    const user = await newUser(t, { name: null });
    const other = await newUser(t);
    const json = { 'content-type': 'application/json' };
    await send({ method: 'POST', url: '/user/signup', payload: { email: 'doc@example.com', password: 'password-1' } });
    await send({ method: 'POST', url: '/user/signup', payload: { email: 'DOC@example.com', password: 'password-1' } });
    await send({ method: 'POST', url: '/user/signup', payload: { email: 'nope', password: 'x' } });
    await send({ method: 'POST', url: '/user/signup', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    await send({
      method: 'POST',
      url: '/user/signup',
      headers: json,
      payload: JSON.stringify({ email: 'x'.repeat(70 * 1024) }),
    });
    for (let i = 0; !seen.has('post /user/signup 429') && i < 10; i++) {
      await send({
        method: 'POST',
        url: '/user/signup',
        payload: { email: `more-${i}@example.com`, password: 'password-1' },
      });
    }

    await send({ method: 'POST', url: '/auth/token', payload: { email: user.email, password: user.password } });
    await send({ method: 'POST', url: '/auth/token', payload: { email: user.email } });
    await send({ method: 'POST', url: '/auth/token', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    await send({
      method: 'POST',
      url: '/auth/token',
      headers: json,
      payload: JSON.stringify({ email: 'x'.repeat(70 * 1024) }),
    });
    await send({ method: 'POST', url: '/auth/token', payload: { email: user.email, password: 'wrong-password' } });
    await send({ method: 'POST', url: '/auth/token', payload: { email: user.email, password: 'wrong-password' } });
    await send({ method: 'POST', url: '/auth/token', payload: { email: user.email, password: user.password } });

    await send({ method: 'GET', url: '/me', headers: { authorization: user.bearer } });
    await send({ method: 'GET', url: '/me' });
    await send({ method: 'GET', url: '/me', headers: { 'x-api-key': (await newRegion(t)).key } });
    await send({ method: 'GET', url: '/me', headers: { authorization: user.basic } });
    for (let i = 0; i < 3; i++)
      await send({ method: 'GET', url: '/me', headers: { authorization: basicHeader(other.email, 'wrong-password') } });

    expect([...seen].sort()).toEqual(
      [
        'post /user/signup 201',
        'post /user/signup 400',
        'post /user/signup 409',
        'post /user/signup 413',
        'post /user/signup 415',
        'post /user/signup 429',
        'post /auth/token 201',
        'post /auth/token 400',
        'post /auth/token 401',
        'post /auth/token 413',
        'post /auth/token 415',
        'post /auth/token 429',
        'get /me 200',
        'get /me 401',
        'get /me 429',
      ].sort(),
    );
  });
});
