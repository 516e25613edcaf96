import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

import { DataSource } from 'typeorm';

import { newRegion, startTestApp, TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('every response', () => {
  it('carries security headers and no X-Powered-By, on success and on error', async () => {
    for (const url of ['/health', '/no-such-route', '/auth/regions/me']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('echoes a sane X-Request-ID and replaces anything else with a UUID', async () => {
    const sane = await t.request({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123.x:y' } });
    expect(sane.headers['x-request-id']).toBe('abc-123.x:y');
    for (const bad of ['has space', 'x'.repeat(200), '<script>', '']) {
      const res = await t.request({ method: 'GET', url: '/health', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const error = await t.request({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'trace-42' } });
    expect(error.headers['x-request-id']).toBe('trace-42');
  });

  it('logs each request in exactly one line, when it ends: request id, method, path without the query, status, time', async () => {
    await t.request({ method: 'GET', url: '/planets?limit=1', headers: { 'x-request-id': 'log-correlation-1' } });
    await t.request({ method: 'GET', url: '/no-such-route', headers: { 'x-request-id': 'log-correlation-2' } });
    await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-request-id': 'log-correlation-3' } });
    const linesOf = (id: string) => t.logs.filter((l) => l.includes(id)).map((l) => JSON.parse(l));
    for (const [id, path, statusCode] of [
      ['log-correlation-1', '/planets', 200],
      ['log-correlation-2', '/no-such-route', 404],
      ['log-correlation-3', '/auth/regions/me', 401],
    ] as const) {
      expect(linesOf(id)).toEqual([
        expect.objectContaining({
          level: 30,
          requestId: id,
          msg: 'request completed',
          req: expect.objectContaining({ method: 'GET', path }),
          res: { statusCode },
          responseTime: expect.any(Number),
        }),
      ]);
    }
  });

  it('never logs an API key header or query string', async () => {
    const region = await newRegion(t);
    await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } });
    await t.request({ method: 'GET', url: `/auth/regions/me?api_key=${region.key}` });
    expect(t.logs.join('\n')).not.toContain(region.key);
  });

  it('never logs a key that a client put in the URL path or in X-Request-ID, and answers with a request id of its own', async () => {
    const region = await newRegion(t);
    await t.request({ method: 'GET', url: `/auth/regions/${region.key}` });
    await t.request({ method: 'GET', url: `/planets/${region.key}` });
    await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${region.key}`,
      headers: { 'x-api-key': region.key },
    });
    // Percent-encoded, it is the same key.
    await t.request({ method: 'GET', url: `/planets/rk%5F${region.key.slice(3)}` });
    await t.request({ method: 'GET', url: `/auth/regions/%72%6b%5f${region.key.slice(3)}` });
    const echoed = await t.request({ method: 'GET', url: '/planets', headers: { 'x-request-id': region.key } });
    expect(echoed.headers['x-request-id']).not.toContain(region.key);
    expect(echoed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const logged = t.logs.join('\n');
    expect(logged).not.toContain(region.key.slice(3));
    expect(logged).toContain('rk_[redacted]');
  });
});

describe('requests that are not valid HTTP', () => {
  const raw = async (request: string): Promise<string> => {
    const { port } = t.app.getHttpServer().address() as { port: number };
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let received = '';
      socket.on('data', (d) => (received += String(d)));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
  };

  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it.each([
    ['a garbage request line', 'GARBAGE\r\n\r\n', 400],
    ['a non-numeric Content-Length', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
    ['a space in the path', 'GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [
      'headers over the size limit',
      `GET /me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20000)}\r\n\r\n`,
      431,
    ],
  ])('answers %s with a problem document', async (_label, request, status) => {
    const response = await raw(request);
    const [head, body] = response.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/content-type: application\/problem\+json/i);
    expect(head).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(head).toMatch(/x-content-type-options: nosniff/i);
    const problem = JSON.parse(body);
    expect(problem).toMatchObject({ status, detail: expect.any(String) });
    expect(problem.type).toBe(`/problems/${status === 431 ? 'headers-too-large' : 'bad-request'}`);
  });

  it('answers a request with an Expect it does not know as it would without one, not with a bare 417', async () => {
    const response = await raw('GET /health HTTP/1.1\r\nHost: x\r\nExpect: teleport\r\nConnection: close\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1.1 200 /);
    expect(response).toMatch(/x-request-id: [0-9a-f-]{36}/i);
  });
});

describe('unknown routes and methods', () => {
  it('answers an unknown route with a 404 problem', async () => {
    const res = await t.request({ method: 'GET', url: '/does/not/exist' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json()).toMatchObject({ status: 404, type: '/problems/not-found', instance: '/does/not/exist' });
  });

  it.each([
    ['PUT', '/auth/regions/me', 'GET, HEAD'],
    ['PATCH', '/auth/region/api-keys', 'POST'],
    ['GET', '/auth/region/api-keys', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['PATCH', '/planets/1', 'GET, HEAD, PUT, DELETE'],
    ['GET', '/auth/token', 'POST'],
    ['POST', '/me', 'GET, HEAD'],
    ['DELETE', '/planets', 'GET, HEAD, POST'],
    ['GET', '/auth/region/api-keys/0b1f0e3c-8f3e-4f7e-9d55-3a3f1a2b4c5d/roll', 'POST'],
  ])(
    'answers %s %s (a known path, wrong method) with a 405 problem whose Allow lists the methods it has',
    async (method, url, allow) => {
      const res = await t.request({ method: method, url, headers: { 'x-api-key': 'x' } });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toMatchObject({
        status: 405,
        type: '/problems/method-not-allowed',
        title: 'Method not allowed',
        instance: url,
      });
      expect(res.json().detail).toBe(`${method} is not allowed on ${url}; allowed: ${allow}.`);
    },
  );

  it('answers 405 before reading what a wrong-method request sends: a body that is not JSON or too large', async () => {
    const json = { 'content-type': 'application/json' };
    for (const payload of ['{"name":', 'x'.repeat(70 * 1024)]) {
      const res = await t.request({ method: 'PATCH', url: '/planets/1', headers: json, payload });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    }
  });

  it('answers HEAD where GET is, without a body, and lists HEAD in Allow only there', async () => {
    const head = await t.request({ method: 'HEAD', url: '/planets' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const noGet = await t.request({ method: 'HEAD', url: '/auth/token' });
    expect(noGet.statusCode).toBe(405);
    expect(noGet.headers.allow).toBe('POST');
  });

  it('answers OPTIONS, which only CORS preflights get an answer to, with a 405 on a known path', async () => {
    const res = await t.request({ method: 'OPTIONS', url: '/planets' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it.each([
    ['GET', '/planets/1/moons'],
    ['PATCH', '/nowhere'],
    ['POST', '/auth'],
    ['GET', '/Planets'],
    ['GET', '/planets/'],
  ])('still answers %s %s (no such path under any method) with a 404', async (method, url) => {
    const res = await t.request({ method: method, url });
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
    expect(res.json()).toMatchObject({ status: 404, type: '/problems/not-found' });
  });
});

describe('GET /health', () => {
  it('reports the database up', async () => {
    const res = await t.request({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: 'up', redis: 'not configured' });
  });
});

describe('database schema', () => {
  it('is exactly what the entities describe once the migrations ran (nothing left to generate)', async () => {
    const pending = await t.app.get(DataSource).driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('has applied every migration', async () => {
    const dataSource = t.app.get(DataSource);
    const applied = await dataSource.query('SELECT name FROM migrations ORDER BY id');
    // Found by a glob in each feature's folder; applied in the order of their timestamps.
    const found = dataSource.migrations.map((m) => m.name!);
    const byTimestamp = (a: string, b: string) => Number(/\d{13}$/.exec(a)) - Number(/\d{13}$/.exec(b));
    expect(found).toEqual(
      expect.arrayContaining(['RegionKeys1763800000000', 'Users1763800001000', 'CelestialBodies1763800002000']),
    );
    expect(applied.map((m: { name: string }) => m.name)).toEqual([...found].sort(byTimestamp));
  });
});

describe('OpenAPI document', () => {
  it('is served as OpenAPI 3.1 at /docs-json and /docs-yaml, with Swagger UI at /docs', async () => {
    const json = await t.request({ method: 'GET', url: '/docs-json' });
    expect(json.statusCode).toBe(200);
    expect(json.json().openapi).toBe('3.1.0');
    const yaml = await t.request({ method: 'GET', url: '/docs-yaml' });
    expect(yaml.body).toMatch(/^openapi: 3\.1\.0/m);
    const ui = await t.request({ method: 'GET', url: '/docs' });
    expect(ui.headers['content-type']).toContain('text/html');
    expect(ui.body).toContain('swagger-ui-bundle.js');
    const bundle = await t.request({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
  });

  it('serves Swagger UI with its title, remembered authorisation, and the security headers on every asset', async () => {
    const ui = await t.request({ method: 'GET', url: '/docs' });
    expect(ui.body).toContain('<title>Region keys and Galaxy API</title>');
    const init = await t.request({ method: 'GET', url: '/docs/swagger-ui-init.js' });
    expect(init.body).toMatch(/"persistAuthorization":\s*true/);
    // The embedded document's only server is relative: "Try it out" calls the host that served the page.
    expect(init.body).toMatch(/"servers":\s*\[\s*\{\s*"url":\s*"\/"\s*\}\s*\]/);
    for (const url of [
      '/docs',
      '/docs/swagger-ui-init.js',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui.css',
      '/docs-json',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 200 });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe("frame-ancestors 'none'");
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('is the committed openapi.json (run `npm run openapi:export` after changing the API)', async () => {
    const served = (await t.request({ method: 'GET', url: '/docs-json' })).json();
    expect(served).toEqual(JSON.parse(readFileSync('openapi.json', 'utf8')));
  });

  it('documents every region-key route with the apiKeyHeader scheme and its problem responses', async () => {
    const doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
    expect(doc.components.securitySchemes.apiKeyHeader).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    );
    const operations = [
      [doc.paths['/auth/regions/me'].get, ['200', '400', '401', '403', '429', '503']],
      [doc.paths['/auth/region/api-keys'].post, ['201', '400', '401', '403', '409', '413', '415', '422', '429', '503']],
      [
        doc.paths['/auth/region/api-keys/{id}'].delete,
        ['204', '400', '401', '403', '404', '409', '412', '413', '415', '429', '503'],
      ],
    ] as const;
    for (const [operation, statuses] of operations) {
      expect(operation.security).toEqual([{ apiKeyHeader: [] }]);
      expect(Object.keys(operation.responses).sort()).toEqual([...statuses].sort());
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(operation.responses[status].content['application/problem+json'].schema).toEqual({
          $ref: '#/components/schemas/Problem',
        });
      }
    }
  });
});
