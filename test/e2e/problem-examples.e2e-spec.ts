import type { InjectOptions, Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import { declaredExamples, expectExampleAnswer, type ProblemExample } from '../support/problem-examples';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser, UserFixture } from '../support/users';
import { createPlanet, fixture, multipart } from './planets-support';

// Every problem example of the OpenAPI document against a real answer of its operation:
// the same type, title and status, a detail that matches the example's (its numbers,
// timestamps and UUIDs standing for any), and the same `errors` fields. A table says how each
// (operation, status, type) is provoked; the few that need a fault this app cannot cause are
// listed with the suite that provokes them.

/** Provoked by other suites, with faults this app (PGlite, in process, no Redis) does not cause. */
const ELSEWHERE: Record<string, string> = {
  'POST /planets/{planetId}/image 408 request-timeout': 'a stalled upload, over a socket: upload-limits',
  'POST /planets/{planetId}/image 429 too-many-requests': 'concurrent uploads of one user, over sockets: upload-limits',
};
for (const op of [
  'POST /auth/region/api-keys',
  'POST /auth/region/api-keys/{id}/roll',
  'POST /user/signup',
  'POST /planets',
  'POST /planets/{planetId}/image',
  'POST /celestial-bodies',
]) {
  // One interceptor and one pair of errors for every @Idempotent() route: idempotency compares
  // the key create's answers with their examples.
  ELSEWHERE[`${op} 409 idempotent-request-in-progress`] = 'a retry while the first attempt runs: idempotency';
  ELSEWHERE[`${op} 409 idempotent-answer-lost`] = 'a change whose kept answer was lost: idempotency';
}

const NO_PLANET = 999_999;

describe('problem examples of the OpenAPI document, against real answers', () => {
  let t: TestApp;
  let examples: Map<string, ProblemExample>;
  let region: RegionFixture;
  let alice: UserFixture;
  let bob: UserFixture;
  let planetId: number;
  let readOnlyKey: string;
  let writeOnlyKey: string;
  let fencedKey: string;
  const cases = new Map<string, () => Promise<Response>>();

  const send = (options: InjectOptions) => t.request(options);
  const json = (method: InjectOptions['method'], url: string, payload: unknown, headers: Record<string, string> = {}) =>
    send({ method, url, payload: payload as InjectOptions['payload'], headers });
  const raw = (
    method: InjectOptions['method'],
    url: string,
    body: string,
    type: string,
    headers: Record<string, string>,
  ) => send({ method, url, payload: body, headers: { ...headers, 'content-type': type } });
  const BIG = JSON.stringify({ name: 'x'.repeat(70 * 1024) });

  beforeAll(async () => {
    t = await startTestApp({ MAX_API_KEYS_PER_REGION: '3', LOGIN_FAILURE_LIMIT: '3', SIGNUP_RATE_LIMIT: '20' });
    examples = declaredExamples((await t.app.inject({ method: 'GET', url: '/docs-json' })).json());
    region = await newRegion(t);
    alice = await newUser(t, { name: 'Alice' });
    bob = await newUser(t, { name: 'Bob' });
    planetId = (await createPlanet(t, alice)).id as number;
    const keyWith = async (r: RegionFixture, body: object) => {
      const res = await json('POST', '/auth/region/api-keys', body, { 'x-api-key': r.key });
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
      return res.json<{ key: string }>().key;
    };
    readOnlyKey = await keyWith(region, { permissions: ['region:read'] });
    writeOnlyKey = await keyWith(region, { permissions: ['keys:write'] });
    const fenced = await newRegion(t, 'Fenced');
    fencedKey = await keyWith(fenced, { allowedCidrs: ['10.0.0.0/8'] });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** Registers how `key` is provoked. */
  const provoke = (key: string, how: () => Promise<Response>) => {
    if (cases.has(key)) throw new Error(`${key} twice`);
    cases.set(key, how);
  };

  // Region API keys.
  const regionOps: [string, InjectOptions['method'], () => string, 'keys:write' | 'region:read'][] = [
    ['GET /auth/regions/me', 'GET', () => '/auth/regions/me', 'region:read'],
    ['POST /auth/region/api-keys', 'POST', () => '/auth/region/api-keys', 'keys:write'],
    ['DELETE /auth/region/api-keys/{id}', 'DELETE', () => `/auth/region/api-keys/${region.keyId}`, 'keys:write'],
    ['POST /auth/region/api-keys/{id}/roll', 'POST', () => `/auth/region/api-keys/${region.keyId}/roll`, 'keys:write'],
    ['GET /auth/region/api-keys/{id}', 'GET', () => `/auth/region/api-keys/${region.keyId}`, 'region:read'],
    ['PATCH /auth/region/api-keys/{id}', 'PATCH', () => `/auth/region/api-keys/${region.keyId}`, 'keys:write'],
    ['GET /auth/region/api-keys/{id}/usage', 'GET', () => `/auth/region/api-keys/${region.keyId}/usage`, 'region:read'],
    ['GET /auth/region/events', 'GET', () => '/auth/region/events', 'region:read'],
  ];
  for (const [op, method, url, permission] of regionOps) {
    provoke(`${op} 401 unauthenticated`, () => send({ method, url: url(), headers: { 'x-api-key': 'rk_not-a-key' } }));
    provoke(`${op} 403 insufficient-permission`, () =>
      send({ method, url: url(), headers: { 'x-api-key': permission === 'keys:write' ? readOnlyKey : writeOnlyKey } }),
    );
    provoke(`${op} 403 address-not-allowed`, () => send({ method, url: url(), headers: { 'x-api-key': fencedKey } }));
  }
  const withKey = () => ({ 'x-api-key': region.key });
  for (const op of [
    'POST /auth/region/api-keys',
    'DELETE /auth/region/api-keys/{id}',
    'PATCH /auth/region/api-keys/{id}',
    'POST /auth/region/api-keys/{id}/roll',
  ]) {
    const [method, template] = op.split(' ') as [InjectOptions['method'], string];
    const url = () => template.replace('{id}', region.keyId);
    provoke(`${op} 400 malformed-json`, () => raw(method, url(), '{,', 'application/json', withKey()));
    provoke(`${op} 413 payload-too-large`, () => raw(method, url(), BIG, 'application/json', withKey()));
    provoke(`${op} 415 unsupported-media-type`, () => raw(method, url(), 'hello', 'text/plain', withKey()));
  }
  provoke('POST /auth/region/api-keys 400 validation', () =>
    json('POST', '/auth/region/api-keys', { description: 'x'.repeat(300) }, withKey()),
  );
  provoke('DELETE /auth/region/api-keys/{id} 400 validation', () =>
    send({ method: 'DELETE', url: '/auth/region/api-keys/not-a-uuid', headers: withKey() }),
  );
  provoke('POST /auth/region/api-keys/{id}/roll 400 validation', () =>
    json('POST', `/auth/region/api-keys/${region.keyId}/roll`, { revokeOldAfterSeconds: -1 }, withKey()),
  );
  provoke('GET /auth/region/api-keys/{id}/usage 400 validation', () =>
    send({ method: 'GET', url: `/auth/region/api-keys/${region.keyId}/usage?days=0`, headers: withKey() }),
  );
  provoke('GET /auth/region/events 400 validation', () =>
    send({ method: 'GET', url: '/auth/region/events?limit=0', headers: withKey() }),
  );
  provoke('GET /auth/region/api-keys/{id} 400 validation', () =>
    send({ method: 'GET', url: '/auth/region/api-keys/not-a-uuid', headers: withKey() }),
  );
  provoke('PATCH /auth/region/api-keys/{id} 400 validation', () =>
    json('PATCH', `/auth/region/api-keys/${region.keyId}`, { description: 'x'.repeat(300) }, withKey()),
  );
  const unknownKey = '/auth/region/api-keys/00000000-0000-4000-8000-000000000000';
  provoke('GET /auth/region/api-keys/{id} 404 not-found', () =>
    send({ method: 'GET', url: unknownKey, headers: withKey() }),
  );
  provoke('PATCH /auth/region/api-keys/{id} 404 not-found', () => json('PATCH', unknownKey, {}, withKey()));
  provoke('PATCH /auth/region/api-keys/{id} 412 precondition-failed', () =>
    json('PATCH', `/auth/region/api-keys/${region.keyId}`, {}, { ...withKey(), 'if-match': '"stale"' }),
  );
  provoke('PATCH /auth/region/api-keys/{id} 409 last-api-key', async () => {
    const alone = await newRegion(t, 'Alone, patched');
    return json(
      'PATCH',
      `/auth/region/api-keys/${alone.keyId}`,
      { permissions: ['region:read'] },
      { 'x-api-key': alone.key },
    );
  });
  provoke('DELETE /auth/region/api-keys/{id} 404 not-found', () =>
    send({ method: 'DELETE', url: unknownKey, headers: withKey() }),
  );
  provoke('POST /auth/region/api-keys/{id}/roll 404 not-found', () =>
    json('POST', `${unknownKey}/roll`, {}, withKey()),
  );
  provoke('GET /auth/region/api-keys/{id}/usage 404 not-found', () =>
    send({ method: 'GET', url: `${unknownKey}/usage`, headers: withKey() }),
  );
  provoke('DELETE /auth/region/api-keys/{id} 409 last-api-key', async () => {
    const alone = await newRegion(t, 'Alone');
    return send({ method: 'DELETE', url: `/auth/region/api-keys/${alone.keyId}`, headers: { 'x-api-key': alone.key } });
  });
  provoke('POST /auth/region/api-keys/{id}/roll 409 last-api-key', async () => {
    const alone = await newRegion(t, 'Alone too');
    return json(
      'POST',
      `/auth/region/api-keys/${alone.keyId}/roll`,
      { permissions: ['region:read'] },
      { 'x-api-key': alone.key },
    );
  });
  provoke('POST /auth/region/api-keys/{id}/roll 409 api-key-already-rolled', async () => {
    const rolled = await newRegion(t, 'Rolled');
    const url = `/auth/region/api-keys/${rolled.keyId}/roll`;
    expect((await json('POST', url, {}, { 'x-api-key': rolled.key })).statusCode).toBe(201);
    return json('POST', url, {}, { 'x-api-key': rolled.key });
  });
  const fullRegion = async () => {
    const full = await newRegion(t, 'Full');
    await createKey(t, full.key);
    await createKey(t, full.key);
    return full;
  };
  provoke('POST /auth/region/api-keys 409 api-key-limit', async () => {
    const full = await fullRegion();
    return json('POST', '/auth/region/api-keys', {}, { 'x-api-key': full.key });
  });
  provoke('POST /auth/region/api-keys/{id}/roll 409 api-key-limit', async () => {
    const full = await fullRegion();
    return json('POST', `/auth/region/api-keys/${full.keyId}/roll`, {}, { 'x-api-key': full.key });
  });
  provoke('POST /auth/region/api-keys 422 idempotency-key-reused', async () => {
    const own = await newRegion(t, 'Idempotent');
    const headers = { 'x-api-key': own.key, 'idempotency-key': 'create-1' };
    expect((await json('POST', '/auth/region/api-keys', { description: 'a' }, headers)).statusCode).toBe(201);
    return json('POST', '/auth/region/api-keys', { description: 'b' }, headers);
  });
  provoke('POST /auth/region/api-keys/{id}/roll 422 idempotency-key-reused', async () => {
    const own = await newRegion(t, 'Idempotent roll');
    const headers = { 'x-api-key': own.key, 'idempotency-key': 'roll-1' };
    const url = `/auth/region/api-keys/${own.keyId}/roll`;
    expect((await json('POST', url, { description: 'a' }, headers)).statusCode).toBe(201);
    return json('POST', url, { description: 'b' }, headers);
  });

  // Users and tokens.
  provoke('POST /user/signup 400 validation', () =>
    json('POST', '/user/signup', { email: 'ada@example.com', password: 'short' }),
  );
  provoke('POST /auth/token 400 validation', () => json('POST', '/auth/token', { email: 'ada@example.com' }));
  for (const url of ['/user/signup', '/auth/token']) {
    provoke(`POST ${url} 400 malformed-json`, () => raw('POST', url, '{,', 'application/json', {}));
    provoke(`POST ${url} 413 payload-too-large`, () => raw('POST', url, BIG, 'application/json', {}));
    provoke(`POST ${url} 415 unsupported-media-type`, () => raw('POST', url, 'hello', 'text/plain', {}));
  }
  provoke('POST /user/signup 409 email-taken', () =>
    json('POST', '/user/signup', { name: 'Again', email: alice.email, password: 'a-long-password' }),
  );
  provoke('POST /user/signup 422 idempotency-key-reused', async () => {
    const headers = { 'idempotency-key': 'signup-1' };
    const body = { name: 'Idem', email: 'idem@example.com', password: 'a-long-password' };
    expect((await json('POST', '/user/signup', body, headers)).statusCode).toBe(201);
    return json('POST', '/user/signup', { ...body, name: 'Other' }, headers);
  });
  provoke('POST /user/signup 429 too-many-requests', async () => {
    // SIGNUP_RATE_LIMIT sign-ups from one address; this one's are all refused, and counted.
    const from = { remoteAddress: '10.20.30.40' };
    let res: Response;
    do res = await send({ method: 'POST', url: '/user/signup', payload: {}, ...from });
    while (res.statusCode === 400);
    return res;
  });
  provoke('POST /auth/token 401 unauthenticated', () =>
    json('POST', '/auth/token', { email: alice.email, password: 'not-her-password' }),
  );
  // LOGIN_FAILURE_LIMIT failed sign-ins block this email from this address on every user route.
  const BLOCKED = 'blocked@example.com';
  const blocked = () => ({ authorization: basicHeader(BLOCKED, 'wrong-password') });
  const block = async () => {
    for (let i = 0; i < 4; i++) await send({ method: 'GET', url: '/me', headers: blocked() });
  };
  provoke('POST /auth/token 429 too-many-requests', async () => {
    await block();
    return json('POST', '/auth/token', { email: BLOCKED, password: 'wrong-password' });
  });

  // Planets.
  const imageForm = () =>
    multipart([{ name: 'image', filename: 'planet.png', type: 'image/png', content: fixture('mars.png') }]);
  type Body = () => { payload?: InjectOptions['payload']; headers?: Record<string, string> };
  const userOps: [string, InjectOptions['method'], () => string, Body][] = [
    ['GET /me', 'GET', () => '/me', () => ({})],
    ['POST /planets', 'POST', () => '/planets', () => ({ payload: { name: 'Venus' } })],
    ['PUT /planets/{planetId}', 'PUT', () => `/planets/${planetId}`, () => ({ payload: { name: 'Mars' } })],
    ['DELETE /planets/{planetId}', 'DELETE', () => `/planets/${planetId}`, () => ({})],
    ['POST /planets/{planetId}/image', 'POST', () => `/planets/${planetId}/image`, imageForm],
    [
      'POST /celestial-bodies',
      'POST',
      () => '/celestial-bodies',
      () => ({ payload: { type: 'terrestrial', name: 'Venus' } }),
    ],
  ];
  for (const [op, method, url, payload] of userOps) {
    provoke(`${op} 401 unauthenticated`, () => send({ method, url: url(), ...payload() }));
    provoke(`${op} 429 too-many-requests`, async () => {
      await block();
      const { payload: body, headers } = payload();
      return send({ method, url: url(), payload: body, headers: { ...headers, ...blocked() } });
    });
  }
  // Its example is the upload limit's 429 (provoked elsewhere), not the failed sign-ins'.
  cases.delete('POST /planets/{planetId}/image 429 too-many-requests');
  const asAlice = () => ({ authorization: alice.basic });
  for (const op of [
    'POST /planets',
    'PUT /planets/{planetId}',
    'DELETE /planets/{planetId}',
    'POST /celestial-bodies',
  ]) {
    const [method, template] = op.split(' ') as [InjectOptions['method'], string];
    const url = () => template.replace('{planetId}', String(planetId));
    provoke(`${op} 400 malformed-json`, () => raw(method, url(), '{,', 'application/json', asAlice()));
    provoke(`${op} 413 payload-too-large`, () => raw(method, url(), BIG, 'application/json', asAlice()));
    provoke(`${op} 415 unsupported-media-type`, () => raw(method, url(), 'hello', 'text/plain', asAlice()));
  }
  provoke('GET /planets 400 validation', () => send({ method: 'GET', url: '/planets?limit=0' }));
  provoke('POST /planets 400 validation', () => json('POST', '/planets', { name: '' }, asAlice()));
  provoke('PUT /planets/{planetId} 400 validation', () => json('PUT', `/planets/${planetId}`, { name: '' }, asAlice()));
  provoke('POST /celestial-bodies 400 validation', () =>
    json('POST', '/celestial-bodies', { type: 'terrestrial', name: '' }, asAlice()),
  );
  for (const [op, method] of [
    ['GET /planets/{planetId}', 'GET'],
    ['DELETE /planets/{planetId}', 'DELETE'],
  ] as const) {
    provoke(`${op} 400 validation`, () => send({ method, url: '/planets/0', headers: asAlice() }));
    provoke(`${op} 404 not-found`, () => send({ method, url: `/planets/${NO_PLANET}`, headers: asAlice() }));
  }
  provoke('GET /planets/{planetId}/image 400 validation', () => send({ method: 'GET', url: '/planets/0/image' }));
  provoke('GET /planets/{planetId}/image 404 not-found', () =>
    send({ method: 'GET', url: `/planets/${planetId}/image` }),
  );
  provoke('PUT /planets/{planetId} 404 not-found', () =>
    json('PUT', `/planets/${NO_PLANET}`, { name: 'X' }, asAlice()),
  );
  provoke('POST /celestial-bodies 404 not-found', () =>
    json(
      'POST',
      '/celestial-bodies',
      { type: 'moon', name: 'Phobos', orbit: { planet: { id: NO_PLANET } } },
      asAlice(),
    ),
  );
  for (const [op, method, payload] of [
    ['PUT /planets/{planetId}', 'PUT', { name: 'Mars' }],
    ['DELETE /planets/{planetId}', 'DELETE', undefined],
  ] as const) {
    provoke(`${op} 403 forbidden`, () =>
      send({ method, url: `/planets/${planetId}`, payload, headers: { authorization: bob.basic } }),
    );
    provoke(`${op} 412 precondition-failed`, () =>
      send({ method, url: `/planets/${planetId}`, payload, headers: { ...asAlice(), 'if-match': '"not-its-etag"' } }),
    );
  }
  const image = (content: Buffer, headers: Record<string, string> = asAlice(), url = `/planets/${planetId}/image`) => {
    const form = multipart([{ name: 'image', filename: 'planet.png', type: 'image/png', content }]);
    return send({ method: 'POST', url, payload: form.payload, headers: { ...headers, ...form.headers } });
  };
  provoke('POST /planets/{planetId}/image 400 validation', () => {
    const form = multipart([]);
    return send({
      method: 'POST',
      url: `/planets/${planetId}/image`,
      payload: form.payload,
      headers: { ...asAlice(), ...form.headers },
    });
  });
  provoke('POST /planets/{planetId}/image 403 forbidden', () =>
    image(fixture('mars.png'), { authorization: bob.basic }),
  );
  provoke('POST /planets/{planetId}/image 404 not-found', () =>
    image(fixture('mars.png'), asAlice(), `/planets/${NO_PLANET}/image`),
  );
  provoke('POST /planets/{planetId}/image 413 image-too-large', () =>
    image(Buffer.concat([fixture('mars.png'), Buffer.alloc(5 * 1024 * 1024)])),
  );
  provoke('POST /planets/{planetId}/image 415 unsupported-media-type', () =>
    json('POST', `/planets/${planetId}/image`, { image: 'x' }, asAlice()),
  );
  provoke('POST /planets/{planetId}/image 422 idempotency-key-reused', async () => {
    const headers = { ...asAlice(), 'idempotency-key': 'image-1' };
    expect((await image(fixture('mars.png'), headers)).statusCode).toBe(200);
    return image(Buffer.concat([fixture('mars.png'), Buffer.from('x')]), headers);
  });
  provoke('POST /planets 422 idempotency-key-reused', async () => {
    const headers = { ...asAlice(), 'idempotency-key': 'planet-1' };
    expect((await json('POST', '/planets', { name: 'Ceres' }, headers)).statusCode).toBe(201);
    return json('POST', '/planets', { name: 'Eris' }, headers);
  });
  provoke('POST /celestial-bodies 422 idempotency-key-reused', async () => {
    const headers = { ...asAlice(), 'idempotency-key': 'body-1' };
    const body = { type: 'terrestrial', name: 'Ceres' };
    expect((await json('POST', '/celestial-bodies', body, headers)).statusCode).toBe(201);
    return json('POST', '/celestial-bodies', { ...body, name: 'Eris' }, headers);
  });

  // Problem type pages.
  provoke('GET /problems/{slug} 404 not-found', () => send({ method: 'GET', url: '/problems/no-such-type' }));
  provoke('GET /problems/{slug} 400 validation', () => send({ method: 'GET', url: '/problems/last-api-key%00' }));

  // 503: the database fails under every operation that reads it (last: it is put back after).
  const databaseOps: [string, InjectOptions][] = [
    ['GET /health/ready', { method: 'GET', url: '/health/ready' }],
    ['GET /health', { method: 'GET', url: '/health' }],
    ['GET /planets', { method: 'GET', url: '/planets' }],
    ['GET /planets/{planetId}', { method: 'GET', url: '/planets/1' }],
    ['GET /planets/{planetId}/image', { method: 'GET', url: '/planets/1/image' }],
    ['GET /me', { method: 'GET', url: '/me' }],
    ['POST /auth/token', { method: 'POST', url: '/auth/token', payload: { email: 'a@example.com', password: 'x' } }],
    [
      'POST /user/signup',
      {
        method: 'POST',
        url: '/user/signup',
        payload: { name: 'D', email: 'down@example.com', password: 'a-long-password' },
      },
    ],
    ['POST /planets', { method: 'POST', url: '/planets', payload: { name: 'Down' } }],
    ['PUT /planets/{planetId}', { method: 'PUT', url: '/planets/1', payload: { name: 'Down' } }],
    ['DELETE /planets/{planetId}', { method: 'DELETE', url: '/planets/1' }],
    ['POST /planets/{planetId}/image', { method: 'POST', url: '/planets/1/image', ...imageForm() }],
    [
      'POST /celestial-bodies',
      { method: 'POST', url: '/celestial-bodies', payload: { type: 'terrestrial', name: 'Down' } },
    ],
  ];
  for (const [op, options] of databaseOps) {
    provoke(`${op} 503 unavailable`, () =>
      withDatabaseDown(() =>
        send({
          ...options,
          headers: {
            ...(options.headers as Record<string, string> | undefined),
            ...(/token|signup|health/.test(op) ? {} : { authorization: alice.basic }),
          },
        }),
      ),
    );
  }
  // The key is known to the app already (its cache), as it is between a client's requests.
  for (const [op, , url] of regionOps) {
    const [method] = op.split(' ') as [InjectOptions['method']];
    provoke(`${op} 503 unavailable`, () =>
      withDatabaseDown(() =>
        send({ method, url: url(), headers: withKey(), payload: method === 'POST' ? {} : undefined }),
      ),
    );
  }

  /** Runs `during` while every query fails as a lost connection does. */
  async function withDatabaseDown(during: () => Promise<Response>): Promise<Response> {
    const driver = t.app.get(DataSource).driver;
    const original = driver.createQueryRunner.bind(driver);
    const spy = jest.spyOn(driver, 'createQueryRunner').mockImplementation((mode) => {
      const runner = original(mode);
      runner.query = () => Promise.reject(new Error('Connection terminated unexpectedly'));
      runner.connect = () => Promise.reject(new Error('Connection terminated unexpectedly'));
      return runner;
    });
    try {
      return await during();
    } finally {
      spy.mockRestore();
    }
  }

  it('declares Retry-After on every 429 and 503, and ETag on every 304', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/docs-json' })).json<{
      paths: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>>;
    }>();
    const needs: Record<string, string> = { '429': 'Retry-After', '503': 'Retry-After', '304': 'ETag' };
    const missing: string[] = [];
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const header = needs[status];
          if (!header) continue;
          checked++;
          if (!Object.keys(response.headers ?? {}).includes(header))
            missing.push(`${method} ${path} ${status}: ${header}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('has a provoking request for every example of the document, or the suite that provokes it', () => {
    const declared = [...examples.keys()];
    expect(declared.filter((key) => !cases.has(key) && !(key in ELSEWHERE))).toEqual([]);
    expect([...cases.keys(), ...Object.keys(ELSEWHERE)].filter((key) => !examples.has(key))).toEqual([]);
  });

  it.each([...cases.keys()])('%s: the real answer is its example', async (key) => {
    const example = examples.get(key);
    expect(example).toBeDefined();
    const res = await cases.get(key)!();
    expect(res.statusCode).toBe(example!.status);
    expectExampleAnswer(res.json<ProblemExample>(), key, example);
  });
});
