import { randomBytes } from 'node:crypto';

import { jest } from '@jest/globals';
import { Redis } from 'ioredis';

import { PasswordHasher } from '../../src/users/password-hasher';
import { expectRateLimitFields } from '../support/rate-limits';
import { REDIS_URL, TwoInstances, twoInstancesSharingRedis } from '../support/redis';
import { startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser } from '../support/users';

type Res = { statusCode: number; headers: Record<string, unknown>; json: () => any };

const token = (t: TestApp, email: string, password: string, remoteAddress = '127.0.0.1') =>
  t.request({ method: 'POST', url: '/auth/token', payload: { email, password }, remoteAddress });
const basicFrom = (t: TestApp, authorization: string, remoteAddress: string) =>
  t.request({ method: 'GET', url: '/me', headers: { authorization }, remoteAddress });
const someEmail = () => `nobody-${randomBytes(4).toString('hex')}@example.com`;
const ADDRESS_POLICY = 'login-failures-address';

/** `limit` failed sign-ins from `address`, each for another email, by token and Basic in turn: all 401. */
async function failWithOtherEmails(t: TestApp, address: string, limit: number) {
  for (let i = 0; i < limit; i++) {
    const res =
      i % 2
        ? await basicFrom(t, basicHeader(someEmail(), 'wrong'), address)
        : await token(t, someEmail(), 'wrong', address);
    expect(res.statusCode).toBe(401);
  }
}
const signUp = (t: TestApp, remoteAddress = '127.0.0.1') =>
  t.request({
    method: 'POST',
    url: '/user/signup',
    payload: { email: `u-${randomBytes(6).toString('hex')}@example.com`, password: 'password-1' },
    remoteAddress,
  });
const me = (t: TestApp, authorization: string) => t.request({ method: 'GET', url: '/me', headers: { authorization } });

function expectTooManyRequests(res: Res, limit: number, windowSeconds: number, policy = 'login-failures') {
  expect(res.statusCode).toBe(429);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.json()).toMatchObject({
    type: '/problems/too-many-requests',
    status: 429,
    detail: expect.stringMatching(/Retry in \d+ seconds/),
  });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expectRateLimitFields(res, policy, limit, windowSeconds, 0);
  expect(res.headers['x-ratelimit-reset']).toBe(String(retryAfter));
}

describe('failed sign-ins (counters in memory)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ LOGIN_FAILURE_LIMIT: '3', LOGIN_FAILURE_WINDOW_SECONDS: '60' });
  });
  afterAll(async () => t?.close());

  it('counts failures per address and email, then refuses even the right password with 429, without checking it', async () => {
    const u = await newUser(t);
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const res = await token(t, u.email, 'wrong-password');
      expect(res.statusCode).toBe(401);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expectRateLimitFields(res, 'login-failures', 3, 60, 2 - i);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const compare = jest.spyOn(t.app.get(PasswordHasher), 'compare');
    try {
      expectTooManyRequests(await token(t, u.email, u.password), 3, 60);
      expectTooManyRequests(await token(t, u.email.toUpperCase(), u.password), 3, 60);
      expectTooManyRequests(await me(t, u.basic), 3, 60); // Basic guesses the same password
      expect(compare).not.toHaveBeenCalled();
    } finally {
      compare.mockRestore();
    }

    // Other addresses, other emails, and tokens already issued are not affected.
    expect((await token(t, u.email, u.password, '198.51.100.7')).statusCode).toBe(201);
    expect((await token(t, (await newUser(t)).email, 'wrong-password')).statusCode).toBe(401);
    expect((await me(t, u.bearer)).statusCode).toBe(200);
  });

  it('never counts successful sign-ins, so a user who signs in often is not locked out', async () => {
    const u = await newUser(t);
    for (let i = 0; i < 8; i++) {
      const res = await token(t, u.email, u.password);
      expect(res.statusCode).toBe(201);
      expect(res.headers['x-ratelimit-remaining']).toBe('3');
      expectRateLimitFields(res, 'login-failures', 3, 60, 3);
    }
    for (let i = 0; i < 8; i++) expect((await me(t, u.basic)).statusCode).toBe(200);
  });

  it('counts failed Basic attempts, and answers unknown emails exactly like known ones', async () => {
    const u = await newUser(t);
    for (const email of [u.email, 'nobody-at-all@example.com']) {
      for (let i = 0; i < 3; i++) expect((await me(t, basicHeader(email, 'wrong-password'))).statusCode).toBe(401);
      expectTooManyRequests(await me(t, basicHeader(email, 'wrong-password')), 3, 60);
      expectTooManyRequests(await token(t, email, 'wrong-password'), 3, 60);
    }
    expectTooManyRequests(await me(t, u.basic), 3, 60);
  });

  it('counts failures under the canonical email: other spellings of one address share its allowance', async () => {
    const local = `jos\u00e9-${randomBytes(4).toString('hex')}`;
    const u = await newUser(t, { email: `${local}@b\u00fccher.example` });
    const spellings = [
      `${local.normalize('NFD')}@bu\u0308cher.example`,
      `${local}@xn--bcher-kva.example`,
      `${local.toUpperCase()}@B\u00dcCHER.EXAMPLE`,
    ];
    const remaining = [];
    for (const email of spellings) {
      const res = await token(t, email, 'wrong-password');
      expect(res.statusCode).toBe(401);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    expectTooManyRequests(
      await token(t, `\uff4aos\u00e9${local.slice(4)}@b\u00fccher.example`, 'wrong-password'),
      3,
      60,
    );
    expectTooManyRequests(await token(t, u.email, u.password), 3, 60);
    expectTooManyRequests(await me(t, basicHeader(`${local}@XN--BCHER-KVA.EXAMPLE`, u.password)), 3, 60);
  });
});

describe('failed sign-ins per address, whatever the email (counters in memory)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ LOGIN_FAILURE_LIMIT: '3', LOGIN_ADDRESS_FAILURE_LIMIT: '5' });
  });
  afterAll(async () => t?.close());

  it('refuses the address with 429 past LOGIN_ADDRESS_FAILURE_LIMIT failures for other emails, without checking', async () => {
    const u = await newUser(t);
    const address = '192.0.2.77';
    // Right passwords are not failures: they leave the allowance whole.
    for (let i = 0; i < 6; i++) expect((await token(t, u.email, u.password, address)).statusCode).toBe(201);
    await failWithOtherEmails(t, address, 5);

    const compare = jest.spyOn(t.app.get(PasswordHasher), 'compare');
    try {
      expectTooManyRequests(await token(t, someEmail(), 'wrong', address), 5, 60, ADDRESS_POLICY);
      expectTooManyRequests(await basicFrom(t, basicHeader(someEmail(), 'wrong'), address), 5, 60, ADDRESS_POLICY);
      expectTooManyRequests(await token(t, u.email, u.password, address), 5, 60, ADDRESS_POLICY);
      expect(compare).not.toHaveBeenCalled();
    } finally {
      compare.mockRestore();
    }
    const refused = await token(t, someEmail(), 'wrong', address);
    expect(refused.json().detail).toMatch(/^Too many failed sign-in attempts from your address\./);

    // Another address is not affected; one IPv6 client is its /64.
    expect((await token(t, u.email, u.password, '198.51.100.8')).statusCode).toBe(201);
    await failWithOtherEmails(t, '2001:db8:7::1', 5);
    expectTooManyRequests(await token(t, someEmail(), 'wrong', '2001:db8:7::ffff'), 5, 60, ADDRESS_POLICY);
  });
});

describe('sign-ups (counters in memory)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ SIGNUP_RATE_LIMIT: '3', SIGNUP_RATE_WINDOW_SECONDS: '60' });
  });
  afterAll(async () => t?.close());

  it('allows SIGNUP_RATE_LIMIT sign-ups per address a window, then 429', async () => {
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const res = await signUp(t);
      expect(res.statusCode).toBe(201);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expectRateLimitFields(res, 'signup', 3, 60, 2 - i);
      remaining.push(res.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    expectTooManyRequests(await signUp(t), 3, 60, 'signup');
    expect((await signUp(t, '203.0.113.9')).statusCode).toBe(201);
    // One IPv6 client is its /64.
    for (let i = 0; i < 3; i++) expect((await signUp(t, `2001:db8:5:6::${i + 1}`)).statusCode).toBe(201);
    expectTooManyRequests(await signUp(t, '2001:db8:5:6:ffff::1'), 3, 60, 'signup');
  });
});

describe('with REDIS_URL: two instances share one limit', () => {
  let instances: TwoInstances;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    instances = await twoInstancesSharingRedis({
      SIGNUP_RATE_LIMIT: '3',
      LOGIN_FAILURE_LIMIT: '2',
      LOGIN_ADDRESS_FAILURE_LIMIT: '4',
    });
    ({ a, b } = instances);
  });
  afterAll(async () => instances?.close());

  it('counts sign-ups on either instance against one limit', async () => {
    expect((await signUp(a)).statusCode).toBe(201);
    expect((await signUp(b)).statusCode).toBe(201);
    expect((await signUp(a)).headers['x-ratelimit-remaining']).toBe('0');
    expectTooManyRequests(await signUp(b), 3, 60, 'signup');
    expectTooManyRequests(await signUp(a), 3, 60, 'signup');
  });

  it('counts failed sign-ins on either instance against one limit', async () => {
    const email = 'shared-counter@example.com';
    expect((await token(a, email, 'wrong-password')).statusCode).toBe(401);
    expect((await token(b, email, 'wrong-password')).statusCode).toBe(401);
    expectTooManyRequests(await token(a, email, 'wrong-password'), 2, 60);
    expectTooManyRequests(await me(b, basicHeader(email, 'wrong-password')), 2, 60);
  });

  it('refuses Basic credentials one instance has verified once failures on the other reach the limit', async () => {
    const [address, email, password] = ['192.0.2.91', someEmail(), 'password-1'];
    const signup = {
      method: 'POST',
      url: '/user/signup',
      payload: { email, password },
      remoteAddress: address,
    } as const;
    expect((await a.request(signup)).statusCode).toBe(201);
    const basic = basicHeader(email, password);
    for (let i = 0; i < 2; i++) expect((await basicFrom(a, basic, address)).statusCode).toBe(200); // checked, then cached
    for (let i = 0; i < 2; i++) expect((await token(b, email, 'wrong-password', address)).statusCode).toBe(401);
    expectTooManyRequests(await basicFrom(a, basic, address), 2, 60);
  });

  it('counts failed sign-ins for any email from one address on either instance against one limit', async () => {
    const address = '192.0.2.78';
    for (const app of [a, b]) await failWithOtherEmails(app, address, 2);
    expectTooManyRequests(await token(a, someEmail(), 'wrong', address), 4, 60, ADDRESS_POLICY);
    expectTooManyRequests(await basicFrom(b, basicHeader(someEmail(), 'wrong'), address), 4, 60, ADDRESS_POLICY);
  });

  it('keeps the counters in Redis, under the prefix, without emails in the keys', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${instances.prefix}*`);
      expect(keys.length).toBeGreaterThanOrEqual(2);
      expect(keys.join(' ')).not.toContain('@');
    } finally {
      await redis.quit();
    }
  });
});

describe('with REDIS_URL unreachable', () => {
  it('counts every limit in this instance instead of refusing', async () => {
    const t = await startTestApp({
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_COMMAND_TIMEOUT_MS: '100',
      SIGNUP_RATE_LIMIT: '2',
      LOGIN_FAILURE_LIMIT: '2',
      LOGIN_ADDRESS_FAILURE_LIMIT: '3',
    });
    try {
      await failWithOtherEmails(t, '192.0.2.79', 3);
      expectTooManyRequests(await token(t, someEmail(), 'wrong', '192.0.2.79'), 3, 60, ADDRESS_POLICY);
      for (let i = 0; i < 2; i++) expect((await token(t, 'ann@example.com', 'wrong-password')).statusCode).toBe(401);
      expectTooManyRequests(await token(t, 'ann@example.com', 'wrong-password'), 2, 60);
      for (let i = 0; i < 2; i++) expect((await signUp(t)).statusCode).toBe(201);
      expectTooManyRequests(await signUp(t), 2, 60, 'signup');
    } finally {
      await t.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('declares RateLimit-Policy and RateLimit beside Retry-After and X-RateLimit-* on the limited answers', async () => {
    const t = await startTestApp();
    try {
      const doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
      const answers = [
        ['/user/signup', 'post', '201'],
        ['/user/signup', 'post', '429'],
        ['/auth/token', 'post', '201'],
        ['/auth/token', 'post', '429'],
        ['/me', 'get', '429'],
        ['/planets/{planetId}/image', 'post', '429'],
      ];
      for (const [path, method, status] of answers) {
        const headers = Object.keys(doc.paths[path][method].responses[status].headers ?? {});
        expect({ path, method, status, headers }).toEqual({
          path,
          method,
          status,
          headers: expect.arrayContaining([
            'RateLimit-Policy',
            'RateLimit',
            'X-RateLimit-Limit',
            ...(status === '429' ? ['Retry-After'] : []),
          ]),
        });
      }
    } finally {
      await t.close();
    }
  });
});
