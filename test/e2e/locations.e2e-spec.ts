import { randomBytes } from 'node:crypto';

import type { InjectOptions } from 'light-my-request';

import { newRegion, startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';

/**
 * Every create answers Location with the new resource's absolute URI: under PUBLIC_BASE_URL
 * when set, else under the origin the request was addressed to, as far as the trusted
 * proxies report it. A Host that is not a plain host[:port] is refused, never echoed.
 */

const BALANCER = '10.0.0.2';

type Extra = Partial<InjectOptions> & { headers?: Record<string, string> };

interface Create {
  name: string;
  /** Sends the create with extra request options; returns the Location and the path it must end in. */
  send(t: TestApp, extra: Extra): Promise<{ status: number; location: unknown; path: string }>;
}

/** Each create of the API, with the path its Location must name. */
function creates(
  user: () => UserFixture,
  regionKey: () => string,
  keyToRoll: (t: TestApp) => Promise<string>,
): Create[] {
  const post = async (t: TestApp, url: string, payload: object, headers: Record<string, string>, extra: Extra) =>
    t.request({ method: 'POST', url, payload, ...extra, headers: { ...headers, ...extra.headers } });
  return [
    {
      name: 'POST /planets',
      send: async (t, extra) => {
        const res = await post(t, '/planets', { name: 'Mars' }, { authorization: user().bearer }, extra);
        return { status: res.statusCode, location: res.headers.location, path: `/planets/${res.json().id}` };
      },
    },
    {
      name: 'POST /celestial-bodies (a planet)',
      send: async (t, extra) => {
        const res = await post(
          t,
          '/celestial-bodies',
          { name: 'Venus', type: 'terrestrial' },
          { authorization: user().bearer },
          extra,
        );
        return { status: res.statusCode, location: res.headers.location, path: `/planets/${res.json().id}` };
      },
    },
    {
      name: 'POST /celestial-bodies (a satellite: the planet it orbits)',
      send: async (t, extra) => {
        const planet = (await post(t, '/planets', { name: 'Jupiter' }, { authorization: user().bearer }, {})).json();
        const res = await post(
          t,
          '/celestial-bodies',
          { name: 'Io', type: 'moon', orbit: { planet: { id: planet.id } } },
          { authorization: user().bearer },
          extra,
        );
        return { status: res.statusCode, location: res.headers.location, path: `/planets/${planet.id}` };
      },
    },
    {
      name: 'POST /user/signup (the account: /me)',
      send: async (t, extra) => {
        const email = `located-${randomBytes(6).toString('hex')}@example.com`;
        const res = await post(t, '/user/signup', { email, password: 'a-long-password' }, {}, extra);
        return { status: res.statusCode, location: res.headers.location, path: '/me' };
      },
    },
    {
      name: 'POST /auth/region/api-keys',
      send: async (t, extra) => {
        const res = await post(t, '/auth/region/api-keys', {}, { 'x-api-key': regionKey() }, extra);
        return {
          status: res.statusCode,
          location: res.headers.location,
          path: `/auth/region/api-keys/${res.json().id}`,
        };
      },
    },
    {
      name: 'POST /auth/region/api-keys/{id}/roll (the new key)',
      send: async (t, extra) => {
        const res = await post(
          t,
          `/auth/region/api-keys/${await keyToRoll(t)}/roll`,
          {},
          { 'x-api-key': regionKey() },
          extra,
        );
        return {
          status: res.statusCode,
          location: res.headers.location,
          path: `/auth/region/api-keys/${res.json().id}`,
        };
      },
    },
  ];
}

/** A suite's app with a user and a region, and the creates to try on it. */
function setUp(env: Record<string, string>) {
  const state = {} as { t: TestApp; user: UserFixture; key: string };
  beforeAll(async () => {
    state.t = await startTestApp({ MAX_API_KEYS_PER_REGION: '1000', ...env });
    state.user = await newUser(state.t);
    state.key = (await newRegion(state.t)).key;
  });
  afterAll(async () => state.t.close());
  const keyToRoll = async (t: TestApp) => {
    const res = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': state.key },
      payload: {},
    });
    return res.json().id as string;
  };
  return {
    state,
    all: creates(
      () => state.user,
      () => state.key,
      keyToRoll,
    ),
  };
}

describe('without PUBLIC_BASE_URL', () => {
  const { state, all } = setUp({});

  it.each(all.map((c) => [c.name, c] as const))(
    '%s: the absolute URI under the Host the request was sent to',
    async (_name, create) => {
      const direct = await create.send(state.t, {});
      expect(direct.status).toBe(201);
      expect(direct.location).toBe(`http://localhost:80${direct.path}`);
      for (const host of ['api.example.org', 'API.Example.org:8443', '[2001:db8::1]:8080', '203.0.113.5']) {
        const res = await create.send(state.t, { headers: { host } });
        expect({ host, location: res.location }).toEqual({ host, location: `http://${host.toLowerCase()}${res.path}` });
      }
    },
  );

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

  it.each(all.map((c) => [c.name, c] as const))(
    '%s: ignores X-Forwarded-Proto and X-Forwarded-Host (no proxy is trusted)',
    async (_name, create) => {
      const res = await create.send(state.t, {
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
      });
      expect(res.location).toBe(`http://localhost:80${res.path}`);
    },
  );

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

  it.each(all.map((c) => [c.name, c] as const))(
    '%s: the URI under PUBLIC_BASE_URL, whatever the request says',
    async (_name, create) => {
      const requests: Extra[] = [
        {},
        { headers: { host: 'other.example' } },
        { remoteAddress: BALANCER, headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'proxy.example' } },
      ];
      for (const extra of requests) {
        const res = await create.send(state.t, extra);
        expect(res.status).toBe(201);
        expect(res.location).toBe(`https://api.example.org/galaxy${res.path}`);
      }
    },
  );
});

describe('behind a trusted proxy (TRUST_PROXY set to its address)', () => {
  const { state, all } = setUp({ TRUST_PROXY: BALANCER });
  const viaProxy = (headers: Record<string, string>) => ({
    remoteAddress: BALANCER,
    headers: { host: 'internal:3000', ...headers },
  });

  it.each(all.map((c) => [c.name, c] as const))('%s: the scheme and host the proxy reports', async (_name, create) => {
    const res = await create.send(
      state.t,
      viaProxy({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org' }),
    );
    expect(res.status).toBe(201);
    expect(res.location).toBe(`https://api.example.org${res.path}`);
  });

  it('takes the entry the proxy appended when the client sent its own', async () => {
    const res = await all[0].send(
      state.t,
      viaProxy({ 'x-forwarded-proto': 'http, HTTPS', 'x-forwarded-host': 'evil.example, api.example.org:8443' }),
    );
    expect(res.location).toBe(`https://api.example.org:8443${res.path}`);
  });

  it('ignores a forwarded scheme or host that is not a plain one, and falls back to the connection and Host', async () => {
    const res = await all[0].send(
      state.t,
      viaProxy({ 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'evil.example/x?y' }),
    );
    expect(res.status).toBe(201);
    expect(res.location).toBe(`http://internal:3000${res.path}`);
  });

  it.each(all.map((c) => [c.name, c] as const))(
    '%s: ignores the same headers from a client that is not the proxy',
    async (_name, create) => {
      const res = await create.send(state.t, {
        remoteAddress: '203.0.113.50',
        headers: { host: 'api.example.org', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' },
      });
      expect(res.status).toBe(201);
      expect(res.location).toBe(`http://api.example.org${res.path}`);
    },
  );
});

describe('the OpenAPI document', () => {
  const { state } = setUp({});

  it('declares Location as a URI on every 201', async () => {
    const doc = (await state.t.request({ method: 'GET', url: '/docs-json' })).json();
    const created = Object.entries(
      doc.paths as Record<
        string,
        Record<string, { responses: Record<string, { headers?: Record<string, { schema: object }> }> }>
      >,
    )
      .flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => ({ path, method, response: operation.responses?.['201'] })),
      )
      .filter(({ response }) => response !== undefined);
    expect(created.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'post /auth/region/api-keys',
      'post /auth/region/api-keys/{id}/roll',
      'post /auth/token',
      'post /celestial-bodies',
      'post /planets',
      'post /user/signup',
    ]);
    for (const { method, path, response } of created.filter(({ path }) => path !== '/auth/token')) {
      expect({ method, path, location: response?.headers?.Location?.schema }).toEqual({
        method,
        path,
        location: expect.objectContaining({ type: 'string', format: 'uri' }),
      });
    }
  });
});
