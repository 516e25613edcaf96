import { type CreateContext, loadCreateRecipes, type RequestExtra } from '../support/create-recipes';
import { checksRoute, featuresWithoutRoutes } from '../support/only-features';
import { newRegion, startTestApp } from '../support/test-app';
import { newUser } from '../support/users';
import { fixture, multipart } from './planets-support';

/**
 * Every create answers Location with the new resource's absolute URI: under PUBLIC_BASE_URL
 * when set, else under the origin the request was addressed to, as far as the trusted
 * proxies report it. A Host that is not a plain host[:port] is refused, never echoed.
 *
 * The creates are the operations of openapi.json that answer 201 with a Location; what to
 * send to each is its feature's recipe in test/support/creates/<feature>.ts (see
 * test/support/create-recipes.ts).
 */

const BALANCER = '10.0.0.2';

const { cases, problems } = loadCreateRecipes();
/** The creates tried: all of them, or with ONLY_FEATURES those of its features. */
const checked = cases.filter((c) => checksRoute(c.create.path));

it('has a recipe for every operation of openapi.json that answers 201 with a Location, and none for another', () => {
  expect(problems).toEqual([]);
  expect(cases.length).toBeGreaterThan(0);
  expect(featuresWithoutRoutes(checked.map((c) => c.create.path))).toEqual([]);
});

/**
 * The links to the service that bodies carry, asked for with `extra`: `meta.next` of a page
 * of planets, and the `imageUrl` of an upload. `path` is the image's path.
 */
async function bodyLinks(state: CreateContext, extra: RequestExtra) {
  const { t, user } = state;
  const create = (name: string) =>
    t.request({ method: 'POST', url: '/planets', headers: { authorization: user.basic }, payload: { name } });
  const { id } = (await create('Linked')).json();
  await create('Linked too');
  const page = await t.request({ method: 'GET', url: '/planets?limit=1&offset=0', ...extra });
  const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: fixture('mars.png') }]);
  const upload = await t.request({
    method: 'POST',
    url: `/planets/${id}/image`,
    payload: form.payload,
    ...extra,
    headers: { ...extra.headers, ...form.headers, authorization: user.basic },
  });
  expect([page.statusCode, upload.statusCode]).toEqual([200, 200]);
  return { next: page.json().meta.next, imageUrl: upload.json().imageUrl, path: `/planets/${id}/image` };
}

/** A suite's app with a user and a region, which the recipes get as their context. */
function setUp(env: Record<string, string>) {
  const state = {} as CreateContext;
  beforeAll(async () => {
    state.t = await startTestApp({ MAX_API_KEYS_PER_REGION: '1000', ...env });
    state.user = await newUser(state.t);
    state.regionKey = (await newRegion(state.t)).key;
  });
  afterAll(async () => state.t?.close());
  return { state, all: checked.map((c) => [c.name, c] as const) };
}

describe('without PUBLIC_BASE_URL', () => {
  const { state, all } = setUp({});

  it.each(all)('%s: the absolute URI under the Host the request was sent to', async (_name, create) => {
    const direct = await create.send(state, {});
    expect(direct.status).toBe(201);
    expect(direct.location).toBe(`http://localhost:80${direct.path}`);
    for (const host of ['api.example.org', 'API.Example.org:8443', '[2001:db8::1]:8080', '203.0.113.5']) {
      const res = await create.send(state, { headers: { host } });
      expect({ host, location: res.location }).toEqual({ host, location: `http://${host.toLowerCase()}${res.path}` });
    }
  });

  it.each(all)('%s: answers GET (with the credentials it needs)', async (_name, create) => {
    const res = await create.send(state, {});
    const read = await state.t.request({
      method: 'GET',
      url: new URL(String(res.location)).pathname,
      headers: res.readHeaders ?? {},
    });
    expect(read.statusCode).toBe(200);
  });

  it('names a resource the client can read there', async () => {
    const res = await state.t.request({
      method: 'POST',
      url: '/planets',
      headers: { authorization: state.user.basic },
      payload: { name: 'Ceres' },
    });
    const location = new URL(String(res.headers.location));
    const read = await state.t.request({ method: 'GET', url: location.pathname });
    expect(read.json()).toEqual(res.json());
  });

  it.each(all)('%s: ignores X-Forwarded-Proto and X-Forwarded-Host (no proxy is trusted)', async (_name, create) => {
    const res = await create.send(state, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
    });
    expect(res.location).toBe(`http://localhost:80${res.path}`);
  });

  it('makes meta.next and imageUrl absolute as Location, under the Host the request was sent to', async () => {
    for (const [extra, origin] of [
      [{}, 'http://localhost:80'],
      [{ headers: { host: 'API.Example.org:8443' } }, 'http://api.example.org:8443'],
      [{ headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' } }, 'http://localhost:80'],
    ] as const) {
      const links = await bodyLinks(state, extra);
      expect(links).toMatchObject({ next: `${origin}/planets?limit=1&offset=1`, imageUrl: `${origin}${links.path}` });
    }
  });

  it.each([
    'evil.example/phish?x=',
    'user@evil.example',
    'a b',
    'evil.example:99999',
    'evil.example:',
    '[::1',
    '[not-an-address]',
    '<script>',
    '"quoted"',
    'xn--\u00fc.example',
  ])('refuses a request whose Host is %j with 400, and creates nothing', async (host) => {
    const before = (await state.t.request({ method: 'GET', url: '/planets?limit=1' })).json().meta.total;
    const res = await state.t.request({
      method: 'POST',
      url: '/planets',
      headers: { host, authorization: state.user.bearer },
      payload: { name: 'Forged' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.json()).toMatchObject({ status: 400, errors: [{ field: 'Host' }] });
    expect(res.body).not.toContain('evil');
    expect((await state.t.request({ method: 'GET', url: '/planets?limit=1' })).json().meta.total).toBe(before);
  });
});

describe('with PUBLIC_BASE_URL', () => {
  const { state, all } = setUp({ PUBLIC_BASE_URL: 'https://api.example.org/galaxy/', TRUST_PROXY: '1' });

  it.each(all)('%s: the URI under PUBLIC_BASE_URL, whatever the request says', async (_name, create) => {
    const requests: RequestExtra[] = [
      {},
      { headers: { host: 'other.example' } },
      { remoteAddress: BALANCER, headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'proxy.example' } },
    ];
    for (const extra of requests) {
      const res = await create.send(state, extra);
      expect(res.status).toBe(201);
      expect(res.location).toBe(`https://api.example.org/galaxy${res.path}`);
    }
  });

  it('makes meta.next and imageUrl absolute under PUBLIC_BASE_URL, as Location', async () => {
    const links = await bodyLinks(state, { headers: { host: 'other.example' } });
    expect(links).toMatchObject({
      next: 'https://api.example.org/galaxy/planets?limit=1&offset=1',
      imageUrl: `https://api.example.org/galaxy${links.path}`,
    });
  });
});

describe('behind a trusted proxy (TRUST_PROXY set to its address)', () => {
  const { state, all } = setUp({ TRUST_PROXY: BALANCER });
  const viaProxy = (headers: Record<string, string>) => ({
    remoteAddress: BALANCER,
    headers: { host: 'internal:3000', ...headers },
  });

  it.each(all)('%s: the scheme and host the proxy reports', async (_name, create) => {
    const res = await create.send(
      state,
      viaProxy({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org' }),
    );
    expect(res.status).toBe(201);
    expect(res.location).toBe(`https://api.example.org${res.path}`);
  });

  it('makes meta.next and imageUrl absolute under the scheme and host the proxy reports, as Location', async () => {
    const links = await bodyLinks(
      state,
      viaProxy({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org' }),
    );
    expect(links).toMatchObject({
      next: 'https://api.example.org/planets?limit=1&offset=1',
      imageUrl: `https://api.example.org${links.path}`,
    });
  });

  it('takes the entry the proxy appended when the client sent its own', async () => {
    const res = await all[0][1].send(
      state,
      viaProxy({ 'x-forwarded-proto': 'http, HTTPS', 'x-forwarded-host': 'evil.example, api.example.org:8443' }),
    );
    expect(res.location).toBe(`https://api.example.org:8443${res.path}`);
  });

  it('ignores a forwarded scheme or host that is not a plain one, and falls back to the connection and Host', async () => {
    const res = await all[0][1].send(
      state,
      viaProxy({ 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'evil.example/x?y' }),
    );
    expect(res.status).toBe(201);
    expect(res.location).toBe(`http://internal:3000${res.path}`);
  });

  it.each(all)('%s: ignores the same headers from a client that is not the proxy', async (_name, create) => {
    const res = await create.send(state, {
      remoteAddress: '203.0.113.50',
      headers: { host: 'api.example.org', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
    });
    expect(res.status).toBe(201);
    expect(res.location).toBe(`http://api.example.org${res.path}`);
  });
});

/**
 * The operations that answer 201 without a Location, each with the reason: what they make is
 * no resource a client could read at a URI.
 */
const CREATED_WITHOUT_LOCATION: Record<string, string> = {
  getToken: 'a token, handed out once',
};

describe('the OpenAPI document', () => {
  const { state } = setUp({});

  it('declares Location as a URI on every 201, but those that make no resource', async () => {
    type Operation = {
      operationId: string;
      responses: Record<string, { headers?: Record<string, { schema: object }> }>;
    };
    const doc = (await state.t.request({ method: 'GET', url: '/docs-json' })).json();
    const created = Object.entries(doc.paths as Record<string, Record<string, Operation>>)
      .flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => ({
          operation: `${method.toUpperCase()} ${path} (${operation.operationId})`,
          operationId: operation.operationId,
          response: operation.responses?.['201'],
        })),
      )
      .filter(({ response }) => response !== undefined);
    expect(created.filter(({ operationId }) => operationId in CREATED_WITHOUT_LOCATION)).toHaveLength(
      Object.keys(CREATED_WITHOUT_LOCATION).length,
    );
    for (const { operation, operationId, response } of created) {
      if (operationId in CREATED_WITHOUT_LOCATION) continue;
      // locationHeader() from common/http declares it.
      expect({ operation, location: response?.headers?.Location?.schema }).toEqual({
        operation,
        location: expect.objectContaining({ type: 'string', format: 'uri' }),
      });
    }
  });
});
