import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { InjectOptions, Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import { MAX_SATELLITES_PER_PLANET } from '../../src/celestial-bodies/celestial-body-types';
import { type CreateContext, loadCreateRecipes } from '../support/create-recipes';
import { checksRoute, featuresWithoutRoutes } from '../support/only-features';
import {
  callerOf,
  declaredExamples,
  type DocumentOperation,
  expectExampleAnswer,
  jsonBodySchema,
  type OpenApiDocument,
  type ProblemExample,
  refusedValue,
  resolveSchema,
  sampleBody,
} from '../support/problem-examples';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser, UserFixture } from '../support/users';
import { createPlanet, fixture, multipart } from './planets-support';

// Every problem example of the OpenAPI document against a real answer of its operation:
// the same type, title and status, a detail that matches the example's (its numbers,
// timestamps and UUIDs standing for any), and the same `errors` fields. The common answers of
// a route are provoked from its operation in the document (see `fromTheDocument`): 401 without
// credentials, 403 with a key that lacks the permission or the address, or as a user who did not
// create the item, 404 with path parameters (and references in the body) that name nothing, 400
// from a bad value of each field its example names, a body that is not JSON, too large or not
// JSON at all, 412 with a stale If-Match, 422 by reusing an Idempotency-Key, 429 after failed
// sign-ins, 503 with the database down. A row says how an answer of a route's own is provoked;
// the few that need a fault this app cannot cause name the suite that provokes them.

/** Provoked by other suites, with faults this app (PGlite, in process, no Redis) does not cause. */
const ELSEWHERE: Record<string, string> = {
  'POST /planets/{planetId}/image 408 request-timeout': 'a stalled upload, over a socket: upload-limits',
  'POST /planets/{planetId}/image 429 too-many-requests': 'concurrent uploads of one user, over sockets: upload-limits',
};
// One interceptor and one pair of errors for every @Idempotent() route: idempotency compares
// the key create's answers with their examples.
const ELSEWHERE_BY_TYPE: Record<string, string> = {
  'idempotent-request-in-progress': 'a retry while the first attempt runs: idempotency',
  'idempotent-answer-lost': 'a change whose kept answer was lost: idempotency',
};
const elsewhere = (key: string): string | undefined => ELSEWHERE[key] ?? ELSEWHERE_BY_TYPE[key.split(' ')[3]];

/** The committed document (the served one, as the service suite checks), read when the suite is collected. */
const DOCUMENT = JSON.parse(readFileSync('openapi.json', 'utf8')) as OpenApiDocument;
const DECLARED = declaredExamples(DOCUMENT as Parameters<typeof declaredExamples>[0]);

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
  /** A key whose rate limit is spent: every region route answers it 429. */
  let spentKey: string;
  /** A key slower than the region default, which it may not grant. */
  let slowKey: { id: string; key: string };
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
    t = await startTestApp({
      MAX_API_KEYS_PER_REGION: '3',
      LOGIN_FAILURE_LIMIT: '3',
      SIGNUP_RATE_LIMIT: '20',
      LEAK_REPORT_RATE_LIMIT: '20',
    });
    examples = declaredExamples((await t.app.inject({ method: 'GET', url: '/docs-json' })).json());
    region = await newRegion(t);
    alice = await newUser(t, { name: 'Alice' });
    bob = await newUser(t, { name: 'Bob' });
    planetId = (await createPlanet(t, alice)).id as number;
    const created = async (r: RegionFixture, body: object) => {
      const res = await json('POST', '/auth/region/api-keys', body, { 'x-api-key': r.key });
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
      return res.json<{ id: string; key: string }>();
    };
    const keyWith = async (r: RegionFixture, body: object) => (await created(r, body)).key;
    readOnlyKey = await keyWith(region, { permissions: ['region:read'] });
    writeOnlyKey = await keyWith(region, { permissions: ['keys:write'] });
    const fenced = await newRegion(t, 'Fenced');
    fencedKey = await keyWith(fenced, { allowedCidrs: ['10.0.0.0/8'] });
    const limited = await newRegion(t, 'Limited');
    spentKey = await keyWith(limited, { rateLimit: { requests: 1, perSeconds: 3600 } });
    expect(
      (await send({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': spentKey } })).statusCode,
    ).toBe(200);
    slowKey = await created(limited, { rateLimit: { requests: 10, perSeconds: 3600 } });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** Registers how `key` is provoked. */
  const provoke = (key: string, how: () => Promise<Response>) => {
    if (cases.has(key)) throw new Error(`${key} twice`);
    cases.set(key, how);
  };

  // The answers of each route's own, which the document cannot say how to provoke.

  // Region API keys.
  const withKey = () => ({ 'x-api-key': region.key });
  provoke('PATCH /auth/region/api-keys/{id} 412 precondition-failed', () =>
    json('PATCH', `/auth/region/api-keys/${region.keyId}`, {}, { ...withKey(), 'if-match': '"stale"' }),
  );
  provoke('GET /auth/region/api-keys/current 400 validation', () =>
    send({ method: 'GET', url: '/auth/region/api-keys/current', headers: { ...withKey(), 'if-none-match': 'junk' } }),
  );
  for (const [method, template] of [
    ['GET', '/auth/region/api-keys/{id}'],
    ['DELETE', '/auth/region/api-keys/{id}'],
    ['GET', '/auth/region/api-keys/current'],
  ] as const) {
    provoke(`${method} ${template} 412 precondition-failed`, () =>
      send({ method, url: template.replace('{id}', region.keyId), headers: { ...withKey(), 'if-match': '"stale"' } }),
    );
  }
  provoke('PATCH /auth/region/api-keys/{id} 409 last-api-key', async () => {
    const alone = await newRegion(t, 'Alone, patched');
    return json(
      'PATCH',
      `/auth/region/api-keys/${alone.keyId}`,
      { permissions: ['region:read'] },
      { 'x-api-key': alone.key },
    );
  });
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
  // The region default (null) is faster than the slow key's own.
  const withSlowKey = () => ({ 'x-api-key': slowKey.key });
  provoke('POST /auth/region/api-keys 403 rate-limit-above-caller', () =>
    json('POST', '/auth/region/api-keys', { rateLimit: null }, withSlowKey()),
  );
  provoke('PATCH /auth/region/api-keys/{id} 403 rate-limit-above-caller', () =>
    json('PATCH', `/auth/region/api-keys/${slowKey.id}`, { rateLimit: null }, withSlowKey()),
  );
  provoke('POST /auth/region/api-keys/{id}/roll 403 rate-limit-above-caller', () =>
    json('POST', `/auth/region/api-keys/${slowKey.id}/roll`, { rateLimit: null }, withSlowKey()),
  );
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

  const LEAKED = '/auth/region/api-keys/leaked';
  provoke(`POST ${LEAKED} 400 credentials-not-accepted`, () => json('POST', LEAKED, { keys: ['a'] }, withKey()));
  provoke(`POST ${LEAKED} 400 validation`, () => json('POST', LEAKED, { keys: [] }));
  provoke(`POST ${LEAKED} 429 too-many-requests`, async () => {
    // LEAK_REPORT_RATE_LIMIT reports from one address, whatever their answer: these are all refused, and counted.
    const from = { remoteAddress: '10.20.30.41' };
    let res: Response;
    do res = await send({ method: 'POST', url: LEAKED, payload: {}, ...from });
    while (res.statusCode === 400);
    return res;
  });

  // Users and tokens.
  provoke('POST /user/signup 409 email-taken', () =>
    json('POST', '/user/signup', { name: 'Again', email: alice.email, password: 'a-long-password' }),
  );
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
  const asAlice = () => ({ authorization: alice.basic });
  provoke('POST /planets/{planetId}/image 401 unauthenticated', () =>
    send({ method: 'POST', url: `/planets/${planetId}/image`, ...imageForm() }),
  );
  provoke('POST /planets/{planetId}/image 503 unavailable', () =>
    withDatabaseDown(() => {
      const form = imageForm();
      return send({ method: 'POST', url: '/planets/1/image', ...form, headers: { ...form.headers, ...asAlice() } });
    }),
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
  provoke('POST /celestial-bodies 403 forbidden', () =>
    json(
      'POST',
      '/celestial-bodies',
      { type: 'moon', name: 'Phobos', orbit: { planet: { id: planetId } } },
      { authorization: bob.basic },
    ),
  );
  provoke('POST /celestial-bodies 409 satellite-limit', async () => {
    const full = (await createPlanet(t, alice)).id as number;
    const moon = { type: 'moon', name: 'Moon', orbit: { planet: { id: full } } };
    for (let n = 0; n < MAX_SATELLITES_PER_PLANET; n++)
      expect((await json('POST', '/celestial-bodies', moon, asAlice())).statusCode).toBe(201);
    return json('POST', '/celestial-bodies', moon, asAlice());
  });
  provoke('PUT /planets/{planetId} 403 forbidden', () =>
    json('PUT', `/planets/${planetId}`, { name: 'Mars' }, { authorization: bob.basic }),
  );
  provoke('PUT /planets/{planetId} 412 precondition-failed', () =>
    json('PUT', `/planets/${planetId}`, { name: 'Mars' }, { ...asAlice(), 'if-match': '"not-its-etag"' }),
  );
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
  provoke('GET /planets/{planetId}/image 412 precondition-failed', async () => {
    expect((await image(fixture('mars.png'))).statusCode).toBeLessThan(300);
    return send({ method: 'GET', url: `/planets/${planetId}/image`, headers: { 'if-match': '"stale"' } });
  });
  provoke('GET /planets/{planetId}/image 404 not-found', async () =>
    send({ method: 'GET', url: `/planets/${(await createPlanet(t, alice)).id}/image` }),
  );
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
  provoke('POST /celestial-bodies 400 validation', () =>
    json('POST', '/celestial-bodies', { type: 'terrestrial', name: '' }, asAlice()),
  );
  provoke('POST /celestial-bodies 422 idempotency-key-reused', async () => {
    const headers = { ...asAlice(), 'idempotency-key': 'body-1' };
    const body = { type: 'terrestrial', name: 'Ceres' };
    expect((await json('POST', '/celestial-bodies', body, headers)).statusCode).toBe(201);
    return json('POST', '/celestial-bodies', { ...body, name: 'Eris' }, headers);
  });

  // Problem type pages.
  provoke('GET /problems/{slug} 400 validation', () => send({ method: 'GET', url: '/problems/last-api-key%00' }));
  provoke('GET /problems/{slug} 404 not-found', () => send({ method: 'GET', url: '/problems/no-such-type' }));

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

  // ---------------------------------------------------------------------------------------
  // The common answers of every route, made from its operation in the document

  const NOTHING = '00000000-0000-4000-8000-000000000000';
  const recipeCtx = (): CreateContext => ({ t, user: alice, regionKey: region.key });
  /** Items made by the creates' recipes (test/support/creates/), Alice's, by path. */
  let made: string[] | undefined;
  /**
   * The path of an item of Alice's that `template` (`/comets/{id}`, or a route below it such as
   * `/comets/{id}/launch`) names, made by the create that makes such items.
   */
  const itemOf = async (template: string): Promise<string> => {
    const segments = template.split('/');
    // The longest start of the template that ends in a parameter: the item's own path.
    const end = segments.findLastIndex((segment) => segment.startsWith('{'));
    const pattern = new RegExp(
      `^${segments
        .slice(0, end + 1)
        .join('/')
        .replace(/\{[^}]+\}/g, '[^/]+')}$`,
    );
    const rest = segments
      .slice(end + 1)
      .map((segment) => `/${segment}`)
      .join('');
    made ??= [];
    const found = made.find((path) => pattern.test(path));
    if (found) return found + rest;
    for (const { send } of loadCreateRecipes(DOCUMENT).cases) {
      const answer = await send(recipeCtx(), {});
      if (answer.status !== 201) continue;
      made.push(answer.path);
      if (pattern.test(answer.path)) return answer.path + rest;
    }
    throw new Error(`no create of test/support/creates/ makes an item at ${template}`);
  };
  /**
   * The path with each parameter an existing planet's id (an integer) or a fresh UUID; or, when
   * `absent`, ids that name nothing; `values` for some parameters.
   */
  const fill = (template: string, operation: DocumentOperation, absent = false, values: Record<string, string> = {}) =>
    template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      if (name in values) return values[name];
      const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name);
      if (resolveSchema(DOCUMENT, parameter?.schema).format === 'uuid') return absent ? NOTHING : randomUUID();
      return String(absent ? NO_PLANET : planetId);
    });
  /** A body refers to a planet by `planetId`. */
  const references = (absent: boolean) => (property: string) =>
    property === 'planetId' ? (absent ? NO_PLANET : planetId) : undefined;

  /** How `key` is provoked from its operation in the document, for the answers every route has; undefined for others. */
  const fromTheDocument = (key: string): (() => Promise<Response>) | undefined => {
    const [method, path, status, slug] = key.split(' ') as [InjectOptions['method'], string, string, string];
    const operation = DOCUMENT.paths[path]?.[String(method).toLowerCase()];
    if (!operation) return undefined;
    const caller = callerOf(operation);
    const credentials = (): Record<string, string> =>
      caller === 'user' ? asAlice() : caller === 'region-key' ? withKey() : {};
    const schema = jsonBodySchema(DOCUMENT, operation);
    const body = (absent = false) => (schema ? sampleBody(DOCUMENT, schema, references(absent)) : undefined);
    const request = (headers: Record<string, string>, url = fill(path, operation), payload = body()) =>
      send({ method, url, headers, ...(payload ? { payload } : {}) });
    const problem = `${status} ${slug}`;
    if (problem === '401 unauthenticated' && caller !== 'public') {
      return () => request(caller === 'region-key' ? { 'x-api-key': 'rk_not-a-key' } : {});
    }
    if (problem === '403 insufficient-permission' && caller === 'region-key') {
      return async () => {
        const res = await request({ 'x-api-key': readOnlyKey });
        return res.statusCode === 403 ? res : request({ 'x-api-key': writeOnlyKey });
      };
    }
    if (problem === '403 address-not-allowed' && caller === 'region-key') {
      return () => request({ 'x-api-key': fencedKey });
    }
    if (problem === '429 too-many-requests' && caller === 'region-key') return () => request({ 'x-api-key': spentKey });
    if (problem === '429 too-many-requests' && caller === 'user') {
      return async () => {
        await block();
        return request(blocked());
      };
    }
    if (problem === '503 unavailable') return () => withDatabaseDown(() => request(credentials()));
    if (problem === '404 not-found') return () => request(credentials(), fill(path, operation, true), body(true));
    if (problem === '403 forbidden' && caller === 'user') {
      return async () => request({ authorization: bob.basic }, await itemOf(path));
    }
    if (problem === '412 precondition-failed') {
      return async () => request({ ...credentials(), 'if-match': '"stale"' }, await itemOf(path));
    }
    if (problem === '400 malformed-json')
      return () => raw(method, fill(path, operation), '{,', 'application/json', credentials());
    if (problem === '413 payload-too-large')
      return () => raw(method, fill(path, operation), BIG, 'application/json', credentials());
    if (problem === '415 unsupported-media-type') {
      return () => raw(method, fill(path, operation), 'hello', 'text/plain', credentials());
    }
    if (problem === '422 idempotency-key-reused' && schema) {
      return async () => {
        const headers = { ...credentials(), 'idempotency-key': randomUUID() };
        const first = body()!;
        const url = fill(path, operation);
        expect((await request(headers, url, first)).statusCode).toBeLessThan(300);
        const changed = Object.keys(first).find((name) => typeof first[name] === 'string');
        return request(headers, url, { ...first, [changed!]: `${String(first[changed!])}, again` });
      };
    }
    if (problem === '400 validation') return invalidField(key, method, path, operation, credentials, body);
    return undefined;
  };

  /** The 400 of the fields the example names, each given a value its schema refuses (path, query or body). */
  const invalidField = (
    key: string,
    method: InjectOptions['method'],
    path: string,
    operation: DocumentOperation,
    credentials: () => Record<string, string>,
    body: () => Record<string, unknown> | undefined,
  ): (() => Promise<Response>) | undefined => {
    const fields = (DECLARED.get(key)?.errors ?? []).map((error) => error.field);
    if (fields.length === 0) return undefined;
    // The edge's 400 of an operation that has none of its own (openapi.ts, documentEdgeRefusals).
    if (fields.join() === 'Host') {
      return () => send({ method, url: fill(path, operation), headers: { ...credentials(), host: 'no host' } });
    }
    const payload = body();
    const schema = jsonBodySchema(DOCUMENT, operation);
    const query = new URLSearchParams();
    const inPath: Record<string, string> = {};
    for (const field of fields) {
      const parameter = operation.parameters?.find((p) => p.name === field && p.in !== 'header');
      const property = schema?.properties?.[field];
      const bad = refusedValue(resolveSchema(DOCUMENT, parameter?.schema ?? property));
      if (bad === undefined) return undefined;
      if (parameter?.in === 'path') inPath[field] = String(bad);
      else if (parameter?.in === 'query') query.set(field, String(bad));
      else if (payload && property) payload[field] = bad;
      else return undefined;
    }
    const url = fill(path, operation, false, inPath);
    const search = query.size > 0 ? `?${query}` : '';
    return () => send({ method, url: url + search, headers: credentials(), ...(payload ? { payload } : {}) });
  };

  /** Every example, provoked by its row, or else from the document; undefined for one that is neither. */
  const provokerOf = (key: string) => cases.get(key) ?? fromTheDocument(key);
  const OWN = [...DECLARED.keys()].filter((key) => elsewhere(key) === undefined);
  /** The examples provoked below: all of them, or with ONLY_FEATURES those of its features' routes. */
  const PROVOKED = OWN.filter((key) => checksRoute(key.split(' ')[1]));

  it('has a provoking request for every example of the document, or the suite that provokes it', () => {
    expect([...examples.keys()].sort()).toEqual([...DECLARED.keys()].sort());
    expect(OWN.filter((key) => provokerOf(key) === undefined)).toEqual([]);
    expect([...cases.keys(), ...Object.keys(ELSEWHERE)].filter((key) => !examples.has(key))).toEqual([]);
    expect(featuresWithoutRoutes(PROVOKED.map((key) => key.split(' ')[1]))).toEqual([]);
  });

  it.each(PROVOKED)('%s: the real answer is its example', async (key) => {
    const example = examples.get(key);
    expect(example).toBeDefined();
    const provoke = provokerOf(key);
    expect(provoke).toBeDefined();
    const res = await provoke!();
    expect(res.statusCode).toBe(example!.status);
    expectExampleAnswer(res.json<ProblemExample>(), key, example);
  });
});
