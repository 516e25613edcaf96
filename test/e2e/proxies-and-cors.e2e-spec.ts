import { expectProblem } from '../support/problems';
import { appRoutes } from '../support/routes';
import { newRegion, startTestApp, TestApp } from '../support/test-app';
import { newUser } from '../support/users';

/**
 * Behind a load balancer: the client address comes from X-Forwarded-For only as far as
 * TRUST_PROXY allows, so a client's own forged entries change nothing (rate limits, the
 * audit trail); a malformed entry is ignored. And CORS for the allowed origins only.
 */

const BALANCER = '10.0.0.2';
/** What a load balancer in front sends: the client's own header, then the address it saw. */
const viaBalancer = (forged: string, client: string) => ({
  remoteAddress: BALANCER,
  headers: { 'x-forwarded-for': `${forged}, ${client}` },
});

describe('TRUST_PROXY=1 (one load balancer in front)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '1', LOGIN_FAILURE_LIMIT: '5', SIGNUP_RATE_LIMIT: '3' });
  });
  afterAll(async () => t?.close());

  it('counts wrong passwords by the address the balancer saw, whatever the client forges', async () => {
    const user = await newUser(t);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { remoteAddress, headers } = viaBalancer(`6.6.6.${i}`, '203.0.113.10');
      const res = await t.request({
        method: 'POST',
        url: '/auth/token',
        remoteAddress,
        headers,
        payload: { email: user.email, password: `wrong-${i}-password` },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    // Another client behind the same balancer is not held back by that one.
    const other = await t.request({
      method: 'POST',
      url: '/auth/token',
      ...viaBalancer('203.0.113.10', '203.0.113.11'),
      payload: { email: user.email, password: user.password },
    });
    expect(other.statusCode).toBe(201);
  });

  it('limits sign-ups by the address the balancer saw, whatever the client forges', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/user/signup',
        ...viaBalancer(`198.51.100.${i}`, '203.0.113.20'),
        payload: { email: `forger-${i}-${Date.now()}@example.com`, password: 'a-long-password' },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
  });

  it('records the client address the balancer saw in the audit trail', async () => {
    const region = await newRegion(t);
    const created = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      remoteAddress: BALANCER,
      headers: { 'x-api-key': region.key, 'x-forwarded-for': '6.6.6.6, 203.0.113.30' },
      payload: {},
    });
    expect(created.statusCode).toBe(201);
    const events = (
      await t.request({ method: 'GET', url: '/auth/region/events?limit=1', headers: { 'x-api-key': region.key } })
    ).json();
    expect(events.data[0]).toMatchObject({ type: 'api_key.created', clientAddress: '203.0.113.30' });
  });

  it.each(['"><script>', 'x'.repeat(100), '203.0.113.9:4711', 'unknown', ' , '])(
    'ignores the malformed forwarded address %j: the balancer is the client, never a 500',
    async (bad) => {
      const region = await newRegion(t);
      const res = await t.request({
        method: 'POST',
        url: '/auth/region/api-keys',
        remoteAddress: BALANCER,
        headers: { 'x-api-key': region.key, 'x-forwarded-for': `203.0.113.40, ${bad}` },
        payload: {},
      });
      expect(res.statusCode).toBe(201);
      const events = (
        await t.request({ method: 'GET', url: '/auth/region/events?limit=1', headers: { 'x-api-key': region.key } })
      ).json();
      expect(events.data[0].clientAddress).toBe(BALANCER);
    },
  );
});

describe('TRUST_PROXY as a list of proxy addresses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1,10.0.0.0/8' });
  });
  afterAll(async () => t?.close());

  const clientAddressSeen = async (remoteAddress: string, forwardedFor: string) => {
    const region = await newRegion(t);
    await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      remoteAddress,
      headers: { 'x-api-key': region.key, 'x-forwarded-for': forwardedFor },
      payload: {},
    });
    const events = (
      await t.request({ method: 'GET', url: '/auth/region/events?limit=1', headers: { 'x-api-key': region.key } })
    ).json();
    return events.data[0].clientAddress as string;
  };

  it('reads through the listed proxies, right to left, to the first address not listed', async () => {
    expect(await clientAddressSeen('127.0.0.1', '6.6.6.6, 203.0.113.50, 10.1.2.3')).toBe('203.0.113.50');
  });

  it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
    expect(await clientAddressSeen('198.51.100.7', '203.0.113.50')).toBe('198.51.100.7');
  });
});

describe('without TRUST_PROXY', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ LOGIN_FAILURE_LIMIT: '2' });
  });
  afterAll(async () => t?.close());

  it('never reads X-Forwarded-For: forged addresses do not escape the sign-in limit', async () => {
    const user = await newUser(t);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/auth/token',
        headers: { 'x-forwarded-for': `6.6.6.${i}` },
        payload: { email: user.email, password: 'wrong-password' },
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 429, 429]);
  });

  it('answers no CORS preflight and sends no CORS headers', async () => {
    const get = await t.app.inject({ method: 'GET', url: '/planets', headers: { origin: 'https://app.example.org' } });
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS', () => {
  const ALLOWED = 'https://app.example.org';
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: `${ALLOWED},http://localhost:5173` });
    key = (await newRegion(t)).key;
  });
  afterAll(async () => t?.close());

  const preflight = (origin: string, headers = 'x-api-key') =>
    t.app.inject({
      method: 'OPTIONS',
      url: '/auth/regions/me',
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': headers },
    });

  it('answers the preflight of an allowed origin with what it may send', async () => {
    const res = await preflight(ALLOWED, 'x-api-key,content-type');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toEqual(
      expect.arrayContaining([
        'authorization',
        'x-api-key',
        'content-type',
        'if-match',
        'if-none-match',
        'idempotency-key',
      ]),
    );
    expect(res.headers['access-control-allow-methods']).toMatch(/DELETE/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('lets a page send every method a route has, PATCH included', async () => {
    const routed = new Set(appRoutes(t.app).map((route) => route.method));
    expect(routed).toContain('PATCH');
    for (const method of routed) {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url: '/auth/region/api-keys/1',
        headers: { origin: ALLOWED, 'access-control-request-method': method },
      });
      expect(res.statusCode).toBe(204);
      expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toContain(method);
    }
  });

  it.each([
    ['no Origin', {}],
    ['an allowed Origin', { origin: ALLOWED }],
    ['another Origin', { origin: 'https://evil.example' }],
    ['an Origin and no method', { origin: ALLOWED, 'access-control-request-headers': 'x-api-key' }],
    ['a method and no Origin', { 'access-control-request-method': 'GET' }],
  ])(
    'answers an OPTIONS that is not a preflight (%s) as without CORS: a 405 problem with Allow',
    async (_, headers) => {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/planets', headers });
      expect(expectProblem(res, 405, 'method-not-allowed').detail).toMatch(/OPTIONS/);
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expectProblem(await t.app.inject({ method: 'OPTIONS', url: '/nowhere', headers }), 404, 'not-found');
    },
  );

  it('gives another origin nothing its browser would accept', async () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.org.evil.example',
      'http://app.example.org',
      'null',
    ]) {
      expect((await preflight(origin)).headers['access-control-allow-origin']).toBeUndefined();
      const get = await t.app.inject({ method: 'GET', url: '/auth/regions/me', headers: { origin, 'x-api-key': key } });
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('lets an allowed page read the response and the headers it needs', async () => {
    const res = await t.request({
      method: 'GET',
      url: '/auth/regions/me',
      headers: { origin: ALLOWED, 'x-api-key': key },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers.vary).toMatch(/Origin/);
    const exposed = String(res.headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining([
        'X-Request-ID',
        'Location',
        'ETag',
        'Retry-After',
        'X-RateLimit-Limit',
        'RateLimit-Policy',
        'RateLimit',
        'Idempotent-Replayed',
      ]),
    );
    // Errors too: a page must be able to read a problem document.
    const refused = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { origin: ALLOWED } });
    expect([refused.statusCode, refused.headers['access-control-allow-origin']]).toEqual([401, ALLOWED]);
  });
});
