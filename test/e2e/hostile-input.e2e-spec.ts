import fc from 'fast-check';
import type { InjectOptions, Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import type { AuthPolicy } from '../../src/common/auth/auth-policy';
import { hashApiKey } from '../../src/region-keys/api-key-codec';
import {
  CANARY,
  canary,
  contentType,
  deeplyNestedJson,
  fieldNames,
  headerText,
  multipartBody,
  nastyJson,
  nastyString,
  pathSegment,
  PROTOTYPE_NAMES,
  queryString,
  rawJsonTexts,
} from '../support/hostile-input';
import { checksRoute, featuresWithoutRoutes } from '../support/only-features';
import { propertyRuns } from '../support/property-runs';
import {
  type AppRoute,
  appRoutes,
  documentedInput,
  type OpenApiDocument,
  openApiPath,
  pathParams,
  tableDrift,
} from '../support/routes';
import { createKey, newRegion, startTestApp, TEST_ENV, TestApp } from '../support/test-app';
import { basicHeader, newUser, signJwt, UserFixture } from '../support/users';
import { fixture, multipart } from './planets-support';

/**
 * Property-based hostile input over every route: whatever a client sends (bodies, headers,
 * paths, query strings, multipart forms), the answer is a success or a 4xx RFC 9457 problem,
 * never a 500; no response shows a stack trace, a password hash or a secret the request did
 * not carry, and no log line holds a secret at all.
 */

const JWT_SECRET = `hostile-suite-jwt-secret-${Date.now()}-0123456789abcdef`;
const STACK_TRACE = /\n\s+at \S|\.[jt]s:\d+:\d+|node_modules/;
const BCRYPT_HASH = /\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}/;
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;

type Auth = 'none' | 'key' | 'user';

/** A route as the properties below send to it. */
interface RouteDef {
  method: (typeof METHODS)[number];
  /** The path template, parameters as `{name}`. */
  path: string;
  auth: Auth;
  body: 'none' | 'json' | 'multipart';
  fields: string[];
  query: string[];
  /** Valid values of each path parameter. */
  params: Record<string, string[]>;
  /** A body that passes validation, so that one hostile field gets past the others. */
  validBody: fc.Arbitrary<Record<string, unknown>>;
}

/** What neither the app's route table nor the OpenAPI document says about a route. */
interface RouteKnowledge {
  validBody?: () => fc.Arbitrary<Record<string, unknown>>;
  /** Values the database holds, by parameter name (the document's examples otherwise). */
  params?: () => Record<string, string[]>;
}

const planetIds = () => ({ planetId: [String(alicePlanetId), String(bobPlanetId)] });
const keyIds = () => ({ id: [spareKeyId, spareKeyId.toUpperCase()] });
const aPlanet = () => fc.constant({ name: 'Planet' });

/**
 * Every route of the app, named as appRoutes() names them; an empty entry when the inputs
 * derived from the route and the OpenAPI document are all it takes. A test below fails
 * when the app and this table disagree, so that a new route is not silently left out.
 */
const KNOWLEDGE: Record<string, RouteKnowledge> = {
  'GET /health': {},
  'GET /health/live': {},
  'GET /health/ready': {},
  'GET /problems': {},
  'GET /problems/:slug': {},
  'GET /auth/regions/me': {},
  'POST /auth/region/api-keys': {},
  'GET /auth/region/api-keys/current': {},
  'GET /auth/region/api-keys/:id': { params: keyIds },
  'PATCH /auth/region/api-keys/:id': { params: keyIds },
  'DELETE /auth/region/api-keys/:id': { params: keyIds },
  'POST /auth/region/api-keys/:id/roll': { params: keyIds },
  'GET /auth/region/api-keys/:id/usage': { params: keyIds },
  'GET /auth/region/api-keys/:id/clients': { params: keyIds },
  // Keys never issued: the suite's own keys stay.
  'POST /auth/region/api-keys/leaked': { validBody: () => fc.constant({ keys: ['rk_never-issued'] }) },
  'GET /auth/region/events': {},
  'POST /user/signup': {
    validBody: () => fc.record({ email: fc.uuid().map((u) => `${u}@example.com`), password: canary }),
  },
  'POST /auth/token': {
    validBody: () =>
      fc.constantFrom(
        { email: alice.email, password: alice.password },
        { email: bob.email, password: 'wrong-password' },
      ),
  },
  'GET /me': {},
  'GET /planets': {},
  'GET /planets/:planetId': { params: planetIds },
  'GET /planets/:planetId/image': { params: planetIds },
  'POST /planets': { validBody: aPlanet },
  'PUT /planets/:planetId': { params: planetIds, validBody: aPlanet },
  'DELETE /planets/:planetId': { params: planetIds },
  'POST /planets/:planetId/image': { params: planetIds },
  'POST /celestial-bodies': {
    validBody: () =>
      fc.constantFrom(
        { name: 'Body', type: 'moon', orbit: { planet: { id: alicePlanetId } } },
        { name: 'Body', type: 'dwarf' },
      ),
  },
};

/** Besides the app's routes: the documentation, and paths that do not exist. */
const OTHER_PATHS = ['/docs', '/docs-json', '/nowhere/{planetId}', '/PLANETS', '/planets/{planetId}/image/{planetId}'];

const AUTH: Record<AuthPolicy, Auth> = { public: 'none', 'region-api-key': 'key', user: 'user' };

/** The route as the app declares it and the document describes it, with what KNOWLEDGE adds. */
function routeDef(route: AppRoute, document: OpenApiDocument): RouteDef {
  const known = KNOWLEDGE[route.key] ?? {};
  const documented = documentedInput(document, route);
  const params = { ...documented.params, ...known.params?.() };
  return {
    ...documented,
    method: route.method as RouteDef['method'],
    path: openApiPath(route.path),
    auth: route.policy ? AUTH[route.policy] : 'none',
    params: Object.fromEntries(pathParams(route.path).map((name) => [name, params[name] ?? ['1']])),
    validBody: known.validBody?.() ?? fc.constant({}),
  };
}

const otherPath = (path: string): RouteDef => ({
  method: 'GET',
  path,
  auth: 'none',
  body: 'none',
  fields: [],
  query: [],
  params: planetIds(),
  validBody: fc.constant({}),
});

/** The path with each parameter's first valid value. */
const urlOf = (r: RouteDef) => r.path.replace(/\{([^}]+)\}/g, (_, name: string) => r.params[name][0]);

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;
let regionKey: string;
let revokedKey: string;
let spareKeyId: string;
let alicePlanetId: number;
let bobPlanetId: number;
/** Must never appear in a response that did not carry it, nor in any log line. */
let secrets: string[];
let images: Buffer[];
let served: AppRoute[];
/** The app's routes and the other paths, as the properties send to them (ONLY_FEATURES's alone when set). */
let routes: RouteDef[];

beforeAll(async () => {
  t = await startTestApp({ JWT_SECRET });
  alice = await newUser(t, { name: 'Alice' });
  bob = await newUser(t, { name: 'Bob' });
  const region = await newRegion(t, 'Hostile region');
  regionKey = region.key;
  const revoked = await createKey(t, region.key, 'to revoke');
  await t.request({
    method: 'DELETE',
    url: `/auth/region/api-keys/${revoked.id}`,
    headers: { 'x-api-key': region.key },
  });
  revokedKey = revoked.key;
  const spare = await createKey(t, region.key, 'spare');
  spareKeyId = spare.id;
  const planet = (user: UserFixture) =>
    t.request({
      method: 'POST',
      url: '/planets',
      headers: { authorization: user.basic },
      payload: { name: `${user.name}'s planet` },
    });
  alicePlanetId = (await planet(alice)).json().id;
  bobPlanetId = (await planet(bob)).json().id;
  images = ['mars.png', 'jupiter.jpg', 'neptune.gif', 'pluto.webp'].map(fixture);
  const upload = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: images[0] }]);
  await t.request({
    method: 'POST',
    url: `/planets/${alicePlanetId}/image`,
    headers: { authorization: alice.basic, ...upload.headers },
    payload: upload.payload,
  });
  const hashes: { password_hash: string }[] = await t.app.get(DataSource).query('SELECT password_hash FROM users');
  const keys = [region.key, revoked.key, spare.key, TEST_ENV.INITIAL_REGION_API_KEY];
  secrets = [
    JWT_SECRET,
    alice.password,
    bob.password,
    ...keys,
    ...keys.map(hashApiKey),
    ...hashes.map((h) => h.password_hash),
  ];
  served = appRoutes(t.app);
  const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<OpenApiDocument>();
  routes = [...served.map((r) => routeDef(r, document)), ...OTHER_PATHS.map(otherPath)].filter((r) =>
    checksRoute(r.path),
  );
});
afterAll(async () => t?.close());

// ---------------------------------------------------------------------------------------
// What a hostile client sends

const anyEmail = () =>
  fc.oneof(
    fc.constantFrom(
      alice.email,
      bob.email,
      alice.email.toUpperCase(),
      ` ${alice.email} `,
      'nobody@example.com',
      '',
      'a:b@example.com',
    ),
    fc.uuid().map((u) => `${u}@example.com`),
    nastyString,
  );
const anyPassword = () =>
  fc.oneof(
    canary,
    canary.map((c) => `:${c}`),
    nastyString,
    fc.constant(alice.password),
  );

/** Tokens a client could forge: wrong algorithms, wrong secrets, odd claims (some signed with the real secret). */
const forgedJwt = () =>
  fc
    .record({
      header: fc.constantFrom<Record<string, unknown>>(
        { alg: 'HS256', typ: 'JWT' },
        { alg: 'none', typ: 'JWT' },
        { alg: 'HS512' },
        { alg: 'RS256' },
        { alg: 'HS256', kid: '../../dev/null' },
        { alg: 'HS256', crit: ['x'] },
      ),
      sub: fc.oneof(
        fc.constantFrom(String(alice.id), String(bob.id), '0', '-1', '99999999999', '1e3', ' 1'),
        fc.integer(),
        nastyString,
        fc.constant(null),
      ),
      exp: fc.oneof(
        fc.constant(Math.floor(Date.now() / 1000) + 3600),
        fc.constant(1),
        fc.constant('tomorrow'),
        fc.constant(undefined),
        fc.double(),
      ),
      secret: fc.constantFrom(JWT_SECRET, 'a-secret-that-is-wrong-0123456789', ''),
    })
    .map(({ header, sub, exp, secret }) =>
      signJwt({ sub, ...(exp === undefined ? {} : { exp }), iat: Math.floor(Date.now() / 1000) }, secret, header),
    );

const authorizationJunk = () => {
  const aliceEncoded = alice.basic.slice('Basic '.length);
  return fc.oneof(
    fc.constantFrom(
      'Basic',
      'Basic ',
      'Basic ====',
      'Basic Og==',
      'Basic YTo=',
      'Bearer',
      'Bearer ',
      'Bearer a.b.c',
      'Digest username="x"',
      'Negotiate abc',
      'ApiKey x',
      `Bearer ${'e'.repeat(5000)}`,
      `basic ${aliceEncoded}`,
      `BASIC  ${aliceEncoded}`,
      `${alice.basic} `,
      `${alice.basic}x`,
      `${alice.basic}, Bearer x`,
      `${alice.bearer}.x`,
      `${alice.bearer} ${alice.bearer}`,
    ),
    fc.tuple(anyEmail(), anyPassword()).map(([email, password]) => basicHeader(email, password)),
    fc.uint8Array({ maxLength: 60 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64')}`),
    forgedJwt().map((token) => `Bearer ${token}`),
    headerText(80).map((text) => `Bearer ${text}`),
    headerText(80).map((text) => `Basic ${text}`),
    headerText(80),
  );
};

const apiKeyJunk = () =>
  fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'rk_',
      `${regionKey} `,
      regionKey.slice(0, -1),
      `${regionKey.slice(0, -1)}${regionKey.endsWith('a') ? 'b' : 'a'}`,
      regionKey.toLowerCase(),
      'x'.repeat(300),
    ),
    canary,
    fc.stringMatching(/^[0-9A-Za-z]{49}$/).map((body) => `rk_${body}`),
    headerText(80),
  );

/** Headers for a route: mostly the right credentials (so the request reaches validation), often junk. */
function headersFor(r: RouteDef): fc.Arbitrary<Record<string, string | string[]>> {
  const valid = r.auth === 'key' ? { 'x-api-key': regionKey } : r.auth === 'user' ? { authorization: alice.basic } : {};
  const credentials = fc.oneof(
    { arbitrary: fc.constant(valid), weight: 4 },
    { arbitrary: fc.constant(r.auth === 'user' ? { authorization: alice.bearer } : valid), weight: 2 },
    {
      arbitrary: fc.constantFrom(
        { authorization: bob.basic },
        { 'x-api-key': revokedKey },
        {},
        { 'x-api-key': [regionKey, regionKey] },
      ),
      weight: 1,
    },
    { arbitrary: authorizationJunk().map((authorization) => ({ ...valid, authorization })), weight: 2 },
    { arbitrary: apiKeyJunk().map((key) => ({ ...valid, 'x-api-key': key })), weight: 2 },
  );
  const extra = fc.record(
    {
      'x-request-id': fc.oneof(
        fc.uuid(),
        headerText(140),
        fc.constantFrom('', 'a'.repeat(128), 'a'.repeat(129), '../x', 'abc def'),
      ),
      accept: fc.constantFrom(
        'application/json',
        'text/html',
        '*/*',
        'application/xml',
        '',
        'application/problem+json;q=0',
      ),
      cookie: canary.map((c) => `session=${c}`),
      'x-forwarded-for': fc.constantFrom('203.0.113.9', 'garbage', '::1, 198.51.100.1', ''),
      'if-none-match': fc.oneof(fc.constantFrom('*', 'W/"x"', '"a", "b"', ''), headerText(40)),
    },
    { requiredKeys: [] },
  );
  return fc.tuple(credentials, extra).map(([c, e]) => ({ ...e, ...c }) as Record<string, string | string[]>);
}

interface Payload {
  contentType?: string;
  payload?: string | Buffer;
}

function bodyFor(r: RouteDef): fc.Arbitrary<Payload> {
  const json = (value: fc.Arbitrary<unknown>) =>
    fc
      .tuple(
        value,
        fc.oneof({ arbitrary: fc.constant('application/json'), weight: 4 }, { arbitrary: contentType, weight: 1 }),
      )
      .map(([v, type]) => ({
        contentType: type,
        payload: JSON.stringify(v),
      }));
  const fields = fieldNames(r.fields);
  const oneHostileField = fc
    .tuple(r.validBody, fields, nastyJson(fields))
    .map(([body, field, value]) => Object.defineProperty({ ...body }, field, { value, enumerable: true }));
  const raw = fc
    .tuple(rawJsonTexts(r.fields[0] ?? 'name'), fc.oneof(fc.constant('application/json'), contentType))
    .map(([payload, type]) => ({ payload, contentType: type }));
  const bytes = fc
    .tuple(fc.uint8Array({ maxLength: 200 }), contentType)
    .map(([b, type]) => ({ payload: Buffer.from(b), contentType: type }));
  const oversized = fc.constant({
    contentType: 'application/json',
    payload: JSON.stringify({ [r.fields[0] ?? 'name']: 'x'.repeat(70_000) }),
  });
  const form = multipartBody(images);
  const none = fc.constant<Payload>({});
  const weighted = (main: fc.Arbitrary<Payload>[], others: fc.Arbitrary<Payload>[]) =>
    fc.oneof(
      ...main.map((arbitrary) => ({ arbitrary, weight: 4 })),
      ...others.map((arbitrary) => ({ arbitrary, weight: 1 })),
    );
  if (r.body === 'json') {
    return weighted(
      [json(oneHostileField), json(fc.dictionary(fields, nastyJson(fields), { maxKeys: 5 })), raw],
      [json(r.validBody), json(r.validBody), json(nastyJson(fields)), bytes, oversized, form, none],
    );
  }
  if (r.body === 'multipart') return weighted([form], [json(nastyJson(fields)), raw, bytes, none]);
  return fc.oneof(
    { arbitrary: none, weight: 6 },
    { arbitrary: json(nastyJson(fields)), weight: 1 },
    { arbitrary: raw, weight: 1 },
    { arbitrary: form, weight: 1 },
  );
}

function requestFor(r: RouteDef): fc.Arbitrary<InjectOptions> {
  const segments = fc.record(
    Object.fromEntries(Object.entries(r.params).map(([name, valid]) => [name, pathSegment(valid)])),
  );
  return fc
    .record({
      method: fc.oneof(
        { arbitrary: fc.constant(r.method), weight: 8 },
        { arbitrary: fc.constantFrom(...METHODS), weight: 1 },
      ),
      segments,
      query: fc.option(queryString(r.query.length > 0 ? r.query : ['limit']), { freq: 3 }),
      headers: headersFor(r),
      body: bodyFor(r),
    })
    .map(({ method, segments, query, headers, body }) => {
      const path = r.path.replace(/\{([^}]+)\}/g, (_, name: string) => segments[name]);
      return {
        method,
        url: query === null ? path : `${path}?${query}`,
        headers: body.contentType === undefined ? headers : { ...headers, 'content-type': body.contentType },
        ...(body.payload === undefined ? {} : { payload: body.payload }),
      };
    });
}

// ---------------------------------------------------------------------------------------
// What every answer must be

/** Sends a request and checks the answer and the log lines it caused against the rules above. */
async function send(request: InjectOptions): Promise<Response> {
  const firstLog = t.logs.length;
  // HEAD and OPTIONS are not operations of the document; the rest is checked against it.
  const documented = !['HEAD', 'OPTIONS'].includes(String(request.method));
  const res = documented ? await t.request(request) : await t.app.inject(request);
  const logs = t.logs.slice(firstLog);
  const where = `${request.method} ${request.url} → ${res.statusCode}`;
  if (res.statusCode >= 500) throw new Error(`${where}: ${res.body.slice(0, 300)}\n${logs.join('\n').slice(0, 3000)}`);

  const sentId = (request.headers as Record<string, unknown> | undefined)?.['x-request-id'];
  const requestId = String(res.headers['x-request-id']);
  expect(requestId).toMatch(SANE_REQUEST_ID);
  if (typeof sentId === 'string' && SANE_REQUEST_ID.test(sentId)) expect(requestId).toBe(sentId);
  expect(res.headers['x-content-type-options']).toBe('nosniff');

  if (res.statusCode >= 400 && request.method !== 'HEAD') {
    expect({ where, type: res.headers['content-type'] }).toEqual({
      where,
      type: 'application/problem+json; charset=utf-8',
    });
    const problem = res.json();
    expect(problem).toEqual(
      expect.objectContaining({
        type: expect.stringMatching(/^\/problems\/[a-z-]+$/),
        title: expect.any(String),
        status: res.statusCode,
        detail: expect.any(String),
      }),
    );
    for (const error of problem.errors ?? [])
      expect(error).toEqual({ field: expect.any(String), message: expect.any(String) });
  }

  const sent = JSON.stringify({ url: request.url, headers: request.headers, payload: request.payload?.toString() });
  const body = res.rawPayload.toString('latin1');
  for (const secret of secrets) {
    if (!sent.includes(secret)) expect({ where, leaked: body.includes(secret) }).toEqual({ where, leaked: false });
  }
  expect({
    where,
    stack: STACK_TRACE.test(res.body),
    hash: BCRYPT_HASH.test(res.body),
    canary: CANARY.test(body),
  }).toEqual({ where, stack: false, hash: false, canary: false });

  for (const line of logs) {
    const leaked = secrets.filter((s) => line.includes(s));
    expect({
      where,
      line,
      leaked,
      canary: CANARY.test(line),
      hash: BCRYPT_HASH.test(line),
      bearer: line.includes(alice.bearer.slice(7)),
    }).toEqual({
      where,
      line,
      leaked: [],
      canary: false,
      hash: false,
      bearer: false,
    });
    // An error-level line means an unexpected failure, even if the answer hid it.
    expect({ where, line, level: (JSON.parse(line) as { level: number }).level < 50 }).toEqual({
      where,
      line,
      level: true,
    });
  }
  return res;
}

// ---------------------------------------------------------------------------------------

it('knows every route of the app, and only those', () => {
  expect(tableDrift(served, KNOWLEDGE)).toEqual({ missing: [], extra: [] });
  expect(featuresWithoutRoutes(routes.map((r) => r.path))).toEqual([]);
});

it('answers any request to any route with a success or a 4xx problem, and leaks nothing', async () => {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...routes).chain(requestFor), async (request) => {
      await send(request);
    }),
    propertyRuns(600),
  );
}, 120_000);

it('answers deeply nested JSON on every JSON route with a 400', async () => {
  const jsonRoutes = routes.filter((r) => r.body === 'json');
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...jsonRoutes), deeplyNestedJson, fc.boolean(), async (r, nested, inField) => {
      const headers =
        r.auth === 'key' ? { 'x-api-key': regionKey } : r.auth === 'user' ? { authorization: alice.basic } : {};
      const payload = inField ? `{${JSON.stringify(r.fields[0])}:${nested}}` : nested;
      const res = await send({
        method: r.method,
        url: urlOf(r),
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
    }),
    propertyRuns(40),
  );
}, 120_000);

it('answers a 64 KiB body of many fields, items or errors on every JSON route with a problem of at most 20 errors', async () => {
  const limit = 64 * 1024;
  /** `part(i)` joined with commas until the next would pass the body limit. */
  const filled = (open: string, close: string, part: (i: number) => string): string => {
    let text = open;
    for (let i = 0; text.length + part(i).length + close.length + 1 < limit; i++)
      text += `${i > 0 ? ',' : ''}${part(i)}`;
    return text + close;
  };
  for (const r of routes.filter((route) => route.body === 'json')) {
    const headers =
      r.auth === 'key' ? { 'x-api-key': regionKey } : r.auth === 'user' ? { authorization: alice.basic } : {};
    for (const payload of [
      filled('{', '}', (i) => `"a${i}":0`),
      filled(`{${JSON.stringify(r.fields[0])}:[`, ']}', () => '{}'),
      // As many fields as an object may have, each named at length and holding a NUL: 100 errors.
      `{${Array.from({ length: 100 }, (_, i) => `"${'k'.repeat(600)}${i}":"\\u0000"`).join(',')}}`,
      `{${JSON.stringify(`${'k'.repeat(60_000)}`)}:0}`,
    ]) {
      expect(payload.length).toBeLessThanOrEqual(limit);
      const res = await send({
        method: r.method,
        url: urlOf(r),
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      });
      const where = `${r.method} ${urlOf(r)}: ${payload.slice(0, 40)}`;
      expect({ where, status: res.statusCode }).toEqual({ where, status: 400 });
      expect({ where, errors: (res.json().errors as unknown[]).length <= 20 }).toEqual({ where, errors: true });
      expect({ where, size: res.body.length < 16 * 1024 }).toEqual({ where, size: true });
    }
  }
}, 120_000);

describe('unknown fields', () => {
  // A value inside the field that is not text (a NUL, a lone surrogate) may be what the errors name.
  const namesField = (res: Response, name: string) =>
    (res.json().errors as { field: string }[]).some(
      (e) => e.field === name || e.field.startsWith(`${name}[`) || e.field.startsWith(`${name}.`),
    );

  // __proto__ is refused by the JSON parser itself (a 400 for the whole body), so it is not a field name here.
  const unknownName = (own: string[]) =>
    fc
      .oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
        fc.constantFrom(...PROTOTYPE_NAMES, 'proto', 'Constructor', 'id', 'creator', 'a.b', 'callbackUrl'),
      )
      .filter((name) => !own.includes(name) && name !== '__proto__');

  it('refuses an unknown body field on every JSON route with a 400 that names it', async () => {
    const jsonRoutes = routes.filter((r) => r.body === 'json');
    const cases = fc.constantFrom(...jsonRoutes).chain((r) =>
      fc.record({
        r: fc.constant(r),
        body: r.validBody,
        name: unknownName(r.fields),
        value: nastyJson(fc.constant('x')),
      }),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ r, body, name, value }) => {
        const headers =
          r.auth === 'key' ? { 'x-api-key': regionKey } : r.auth === 'user' ? { authorization: alice.basic } : {};
        const payload = JSON.stringify(
          Object.defineProperty({ ...body }, name, { value: value ?? null, enumerable: true }),
        );
        const res = await send({
          method: r.method,
          url: urlOf(r),
          headers: { ...headers, 'content-type': 'application/json' },
          payload,
        });
        expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 400 });
        expect(namesField(res, name)).toBe(true);
      }),
      propertyRuns(150),
    );
  }, 120_000);

  it('refuses an unknown query parameter of GET /planets with a 400 that names it', async () => {
    await fc.assert(
      fc.asyncProperty(
        unknownName(['limit', 'offset']).filter((name) => !/[[\]]/.test(name) && !/[\uD800-\uDFFF]/.test(name)),
        async (name) => {
          const res = await send({ method: 'GET', url: `/planets?${encodeURIComponent(name)}=1` });
          expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 400 });
          expect(namesField(res, name)).toBe(true);
        },
      ),
      propertyRuns(100),
    );
  }, 120_000);
});

it('takes as Basic credentials every password that sign-up and POST /auth/token take', async () => {
  // Any text of 8 to 72 UTF-8 bytes without NUL (PostgreSQL text cannot hold it).
  const password = fc
    .string({
      unit: fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        fc.constantFrom(':', ' ', 'é', '\u{1F4A9}'),
      ),
      minLength: 8,
      maxLength: 40,
    })
    .filter((p) => !p.includes('\u0000') && Buffer.byteLength(p) >= 8 && Buffer.byteLength(p) <= 72);
  await fc.assert(
    fc.asyncProperty(password, fc.uuid(), async (pw, u) => {
      const email = `${u}@example.com`;
      const signup = await send({ method: 'POST', url: '/user/signup', payload: { email, password: pw } });
      expect({ status: signup.statusCode, body: signup.body }).toMatchObject({ status: 201 });
      expect((await send({ method: 'POST', url: '/auth/token', payload: { email, password: pw } })).statusCode).toBe(
        201,
      );
      const me = await send({ method: 'GET', url: '/me', headers: { authorization: basicHeader(email, pw) } });
      expect({ status: me.statusCode, body: me.body }).toMatchObject({ status: 200 });
      expect(me.json().id).toBe(signup.json().id);
    }),
    propertyRuns(40),
  );
}, 120_000);

it('keeps the stored image unchanged when an upload is refused', async () => {
  const planetId = (
    await send({
      method: 'POST',
      url: '/planets',
      headers: { authorization: alice.basic },
      payload: { name: 'Imaged' },
    })
  ).json().id;
  const image = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: images[0] }]);
  const first = await send({
    method: 'POST',
    url: `/planets/${planetId}/image`,
    headers: { authorization: alice.basic, ...image.headers },
    payload: image.payload,
  });
  expect(first.statusCode).toBe(200);
  const etag = async () => (await send({ method: 'GET', url: `/planets/${planetId}/image` })).headers.etag;
  let expected = await etag();
  await fc.assert(
    fc.asyncProperty(multipartBody(images), async ({ contentType: type, payload }) => {
      const res = await send({
        method: 'POST',
        url: `/planets/${planetId}/image`,
        headers: { authorization: alice.basic, 'content-type': type },
        payload,
      });
      if (res.statusCode === 200) expected = await etag();
      else expect(await etag()).toBe(expected);
    }),
    propertyRuns(150),
  );
}, 120_000);

it('never stores bytes that are not UTF-8 in a JSON string, and never answers them with a 5xx', async () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 12 }),
    fc.constantFrom([0xff, 0xfe], [0xc0, 0xaf, 0xff], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('/planets', '/user/signup'), bytes, async (url, raw) => {
      const inserted = Buffer.from(raw);
      const [before, after] = JSON.stringify({
        name: 'Name MARK',
        ...(url === '/user/signup'
          ? { email: `bytes-${Date.now()}-${Math.random()}@example.com`, password: 'password-1' }
          : {}),
      }).split('MARK');
      const res = await send({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...(url === '/planets' ? { authorization: alice.basic } : {}) },
        payload: Buffer.concat([Buffer.from(before), inserted, Buffer.from(after)]),
      });
      expect(res.statusCode).toBeLessThan(500);
      if (res.statusCode === 201) {
        // Only text that is UTF-8 gets through, and is stored as it was sent.
        const text = new TextDecoder('utf-8', { fatal: true }).decode(inserted);
        expect(res.json().name).toBe(`Name ${text}`.trim());
      } else expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      if (!inserted.includes(Buffer.from('\uFFFD'))) expect(res.body).not.toContain('\uFFFD');
    }),
    propertyRuns(40),
  );
}, 120_000);

// Cases the properties above found, kept as plain examples.
describe('found by the properties', () => {
  it.each([
    ['the email', 'user@example.com\u0000', 'a-password'],
    ['the password', 'user@example.com', 'pass\u0000word'],
  ])('refuses Basic credentials with a NUL in %s as wrong (401)', async (_, email, password) => {
    const res = await send({ method: 'GET', url: '/me', headers: { authorization: basicHeader(email, password) } });
    expect(res.statusCode).toBe(401);
  });

  it.each([
    ['an unknown route', '/nowhere?token=query-secret-1', 404],
    ['a URL the router cannot decode', '/planets/%zz?token=query-secret-2', 400],
  ])('does not quote the query string of %s in the problem', async (_, url, status) => {
    const res = await send({ method: 'GET', url });
    expect(res.statusCode).toBe(status);
    expect(res.body).not.toContain('query-secret');
  });

  it.each([
    ['a multipart form', 'POST', '/nowhere', multipart([{ name: 'image', content: 'x' }])],
    [
      'a body that is not JSON',
      'DELETE',
      '/PLANETS',
      { headers: { 'content-type': 'application/octet-stream' }, payload: 'x' },
    ],
    ['malformed JSON', 'PATCH', '/planets/1/moons', { headers: { 'content-type': 'application/json' }, payload: '{' }],
    [
      'a body over the limit',
      'PUT',
      '/planet',
      { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(70_000) }) },
    ],
  ] as const)('answers an unknown route with %s as a 404', async (_, method, url, body) => {
    const res = await send({ method, url, ...body });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toBe(`Cannot ${method} ${url}`);
  });

  it.each([
    ['a multipart form', 'POST', '/planets/1', multipart([{ name: 'image', content: 'x' }]), 'GET, HEAD, PUT, DELETE'],
    [
      'malformed JSON',
      'PATCH',
      '/planets/1',
      { headers: { 'content-type': 'application/json' }, payload: '{' },
      'GET, HEAD, PUT, DELETE',
    ],
    [
      'a body over the limit',
      'PUT',
      '/planets',
      { headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(70_000) }) },
      'GET, HEAD, POST',
    ],
  ] as const)('answers a known path asked with another method and %s as a 405', async (_, method, url, body, allow) => {
    const res = await send({ method, url, ...body });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
  });

  it.each([
    ['DELETE', '/auth/region/api-keys/current', 'GET, HEAD'],
    ['PATCH', '/auth/region/api-keys/current', 'GET, HEAD'],
    ['POST', '/auth/region/api-keys/current', 'GET, HEAD'],
    ['GET', '/auth/region/api-keys/leaked', 'POST'],
    ['DELETE', '/auth/region/api-keys/leaked', 'POST'],
  ])(
    'answers %s %s, a literal path beside an item route, as a 405 listing its own methods, not as an item',
    async (method, url, allow) => {
      const res = await send({ method, url, headers: { 'x-api-key': regionKey } });
      expect({ status: res.statusCode, allow: res.headers.allow }).toEqual({ status: 405, allow });
      // A body the parser refuses changes nothing: the path has no such method.
      const empty = await send({ method, url, headers: { 'content-type': 'application/json' }, payload: '' });
      expect({ status: empty.statusCode, allow: empty.headers.allow }).toEqual({ status: 405, allow });
    },
  );

  it.each([
    ['not JSON', 'text/plain', 'x', 415],
    ['over the limit', 'application/json', JSON.stringify({ x: 'x'.repeat(70_000) }), 413],
  ])('documents the answer to a DELETE that carries a body %s', async (_, type, payload, status) => {
    for (const [url, headers] of [
      [`/planets/${bobPlanetId}`, { authorization: bob.basic }],
      [`/auth/region/api-keys/${spareKeyId}`, { 'x-api-key': regionKey }],
    ] as const) {
      // send() checks the answer against the OpenAPI document.
      expect(
        (await send({ method: 'DELETE', url, headers: { ...headers, 'content-type': type }, payload })).statusCode,
      ).toBe(status);
    }
  });
});
