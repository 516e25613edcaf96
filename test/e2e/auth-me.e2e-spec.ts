import { jest } from '@jest/globals';
import bcrypt from 'bcrypt';
import { DataSource } from 'typeorm';

import { PasswordHasher } from '../../src/users/password-hasher';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser, signJwt, UserFixture } from '../support/users';

const SECRET = 'me-suite-secret-of-at-least-32-characters';
const CHALLENGE = 'Basic realm="api", charset="UTF-8", Bearer';

let t: TestApp;
let user: UserFixture;
let region: RegionFixture;

beforeAll(async () => {
  t = await startTestApp({ JWT_SECRET: SECRET });
  user = await newUser(t, { name: 'Hans' });
  region = await newRegion(t);
});
afterAll(async () => t?.close());

const me = (headers: Record<string, string> = {}) => t.request({ method: 'GET', url: '/me', headers });
const now = () => Math.floor(Date.now() / 1000);

/** The one 401 every failed user authentication gets: a problem naming both schemes. */
function expectUserUnauthenticated(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }) {
  expect(res.statusCode).toBe(401);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  expect(res.json()).toMatchObject({ type: '/problems/unauthenticated', status: 401, instance: '/me' });
  return res.json();
}

describe('GET /me', () => {
  it('answers 200 User { id, name } with Basic credentials and with a Bearer token', async () => {
    for (const authorization of [user.basic, user.bearer]) {
      const res = await me({ authorization });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: user.id, name: 'Hans' });
    }
  });

  it('takes the Basic email in any case', async () => {
    expect((await me({ authorization: basicHeader(user.email.toUpperCase(), user.password) })).json().id).toBe(user.id);
  });

  it('takes a Basic password that contains colons', async () => {
    const colons = await newUser(t, { password: 'pa:ss:wo:rd' });
    const res = await me({ authorization: basicHeader(colons.email, 'pa:ss:wo:rd') });
    expect(res.json()).toEqual({ id: colons.id, name: colons.name });
    expectUserUnauthenticated(await me({ authorization: basicHeader(colons.email, 'pa') }));
  });

  it('takes a multi-byte Basic password', async () => {
    const euro = await newUser(t, { password: '€'.repeat(24) });
    expect((await me({ authorization: basicHeader(euro.email, '€'.repeat(24)) })).statusCode).toBe(200);
  });

  describe('refuses with 401 naming both schemes', () => {
    it('no credentials', async () => {
      expectUserUnauthenticated(await me());
    });

    it('a wrong password and an unknown email, with the same body', async () => {
      const wrong = expectUserUnauthenticated(
        await me({ authorization: basicHeader(user.email, `${user.password}!`) }),
      );
      const unknown = expectUserUnauthenticated(
        await me({ authorization: basicHeader('nobody@example.com', user.password) }),
      );
      expect(wrong).toEqual(unknown);
    });

    it.each([
      ['Basic without a colon', `Basic ${Buffer.from(`${'x'}${'y'}`).toString('base64')}`],
      ['Basic with only an email', () => `Basic ${Buffer.from(user.email).toString('base64')}`],
      ['Basic with an empty password', () => basicHeader(user.email, '')],
      ['Basic with bad base64', 'Basic %%%not-base64%%%'],
      ['Basic with base64 that is cut short', () => user.basic.slice(0, -3)],
      ['Basic with nothing after it', 'Basic'],
      ['Bearer with nothing after it', 'Bearer'],
      ['Bearer with garbage', 'Bearer not.a.jwt'],
      ['an unknown scheme', 'Digest username="x"'],
      ['the raw token without a scheme', () => user.bearer.slice('Bearer '.length)],
      ['a valid Bearer token followed by junk', () => `${user.bearer} junk`],
      [
        'a valid Bearer token followed by a second token',
        () => `${user.bearer} ${user.bearer.slice('Bearer '.length)}`,
      ],
    ])('%s', async (_label, header) => {
      expectUserUnauthenticated(await me({ authorization: typeof header === 'function' ? header() : header }));
    });

    it('a Basic password over 72 bytes whose first 72 bytes are right', async () => {
      const exact = 'q'.repeat(72);
      const long = await newUser(t, { password: exact });
      expectUserUnauthenticated(await me({ authorization: basicHeader(long.email, `${exact}-and-more`) }));
    });

    it('a tampered token', async () => {
      const [header, payload, signature] = user.bearer.slice('Bearer '.length).split('.');
      const otherPayload = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: '999' }),
      ).toString('base64url');
      expectUserUnauthenticated(await me({ authorization: `Bearer ${header}.${otherPayload}.${signature}` }));
      const flipped = signature[0] === 'A' ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
      expectUserUnauthenticated(await me({ authorization: `Bearer ${header}.${payload}.${flipped}` }));
    });

    it('an expired token', async () => {
      const valid = signJwt({ sub: String(user.id), iat: now() - 60, exp: now() + 60 }, SECRET);
      expect((await me({ authorization: `Bearer ${valid}` })).statusCode).toBe(200); // the forgery is otherwise right
      const expired = signJwt({ sub: String(user.id), iat: now() - 7200, exp: now() - 3600 }, SECRET);
      expectUserUnauthenticated(await me({ authorization: `Bearer ${expired}` }));
    });

    it('a token signed with another secret', async () => {
      const token = signJwt(
        { sub: String(user.id), iat: now(), exp: now() + 60 },
        'some-other-secret-of-at-least-32-chars',
      );
      expectUserUnauthenticated(await me({ authorization: `Bearer ${token}` }));
    });

    it('a token with alg "none", or another algorithm with the right secret', async () => {
      const claims = { sub: String(user.id), iat: now(), exp: now() + 60 };
      for (const alg of ['none', 'None', 'HS512', 'HS384']) {
        const token = signJwt(claims, SECRET, { alg, typ: 'JWT' });
        expectUserUnauthenticated(await me({ authorization: `Bearer ${token}` }));
      }
    });

    it('a correctly signed token without exp, or whose sub is not a user id', async () => {
      for (const claims of [
        { sub: String(user.id), iat: now() },
        { sub: user.id, iat: now(), exp: now() + 60 },
        { sub: `${user.id}.5`, iat: now(), exp: now() + 60 },
        { sub: '99999999999', iat: now(), exp: now() + 60 },
        { iat: now(), exp: now() + 60 },
      ]) {
        expectUserUnauthenticated(await me({ authorization: `Bearer ${signJwt(claims, SECRET)}` }));
      }
    });

    it('a correctly signed token without iat, issued in the future, or living longer than JWT_TTL', async () => {
      const sub = String(user.id);
      const lived = signJwt({ sub, iat: now() - 60, exp: now() - 60 + 3600 }, SECRET);
      expect((await me({ authorization: `Bearer ${lived}` })).statusCode).toBe(200); // JWT_TTL is an hour
      for (const claims of [
        { sub, exp: now() + 60 },
        { sub, iat: now(), exp: 1e20 },
        { sub, iat: now(), exp: now() + 7200 },
        { sub, iat: now() + 365 * 86400, exp: now() + 365 * 86400 + 60 },
      ]) {
        expectUserUnauthenticated(await me({ authorization: `Bearer ${signJwt(claims, SECRET)}` }));
      }
    });

    it('a valid token or Basic credentials of a user that has been deleted', async () => {
      const gone = await newUser(t);
      expect((await me({ authorization: gone.bearer })).statusCode).toBe(200);
      expect((await me({ authorization: gone.basic })).statusCode).toBe(200); // now in the Basic cache too
      await t.app.get(DataSource).query('DELETE FROM users WHERE id = $1', [gone.id]);
      expectUserUnauthenticated(await me({ authorization: gone.bearer }));
      expectUserUnauthenticated(await me({ authorization: gone.basic }));
    });

    it('a region API key', async () => {
      expectUserUnauthenticated(await me({ 'x-api-key': region.key }));
      expectUserUnauthenticated(await me({ authorization: `Bearer ${region.key}` }));
    });
  });

  it('lets neither a user token nor Basic credentials into region API key routes', async () => {
    for (const authorization of [user.bearer, user.basic]) {
      const res = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    }
    const res = await t.request({
      method: 'GET',
      url: '/auth/regions/me',
      headers: { 'x-api-key': user.bearer.slice('Bearer '.length) },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('the Basic verification cache', () => {
  let compare: ReturnType<typeof jest.spyOn>;

  beforeEach(() => {
    compare = jest.spyOn(t.app.get(PasswordHasher), 'compare');
  });
  afterEach(() => compare.mockRestore());

  it('runs bcrypt once for repeated correct Basic requests', async () => {
    const u = await newUser(t);
    compare.mockClear();
    for (let i = 0; i < 5; i++) expect((await me({ authorization: u.basic })).statusCode).toBe(200);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('still refuses a wrong password after a right one, and never caches a failure', async () => {
    const u = await newUser(t);
    expect((await me({ authorization: u.basic })).statusCode).toBe(200);
    compare.mockClear();
    const wrong = basicHeader(u.email, `${u.password}-wrong`);
    expectUserUnauthenticated(await me({ authorization: wrong }));
    expectUserUnauthenticated(await me({ authorization: wrong }));
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('forgets a success once the password hash changes', async () => {
    const u = await newUser(t);
    expect((await me({ authorization: u.basic })).statusCode).toBe(200);
    const newHash = await bcrypt.hash('the-new-password', 4);
    await t.app.get(DataSource).query('UPDATE users SET password_hash = $1 WHERE id = $2', [newHash, u.id]);
    compare.mockClear();
    expectUserUnauthenticated(await me({ authorization: u.basic }));
    expect(compare).toHaveBeenCalledTimes(1);
    expect((await me({ authorization: basicHeader(u.email, 'the-new-password') })).statusCode).toBe(200);
  });

  it('is not used for tokens: POST /auth/token always checks the password', async () => {
    const u = await newUser(t);
    compare.mockClear();
    for (let i = 0; i < 2; i++) {
      expect(
        (await t.request({ method: 'POST', url: '/auth/token', payload: { email: u.email, password: u.password } }))
          .statusCode,
      ).toBe(201);
    }
    expect(compare).toHaveBeenCalledTimes(2);
  });
});

describe('logs', () => {
  it('hold no password, token or Authorization header after sign-up, token, /me and failures', async () => {
    const logged = await startTestApp({ LOG_LEVEL: 'trace', JWT_SECRET: SECRET });
    try {
      const password = 'Very-Secret-Pass:word';
      const u = await newUser(logged, { password, email: 'logged-user@example.com' });
      const token = u.bearer.slice('Bearer '.length);
      await logged.request({ method: 'GET', url: '/me', headers: { authorization: u.basic } });
      await logged.request({ method: 'GET', url: '/me', headers: { authorization: u.bearer } });
      await logged.request({
        method: 'GET',
        url: '/me',
        headers: { authorization: basicHeader(u.email, `${password}x`) },
      });
      await logged.request({
        method: 'POST',
        url: '/auth/token',
        payload: { email: u.email, password: `${password}x` },
      });
      await logged.request({ method: 'POST', url: '/user/signup', payload: { email: u.email, password } });
      await logged.request({
        method: 'POST',
        url: '/user/signup',
        payload: { email: 'bad', password: `${password}-in-a-400` },
      });
      const text = logged.logs.join('\n');
      expect(logged.logs.length).toBeGreaterThan(5); // requests were logged at all
      for (const secret of [
        password,
        encodeURIComponent(password),
        token,
        token.split('.')[2],
        u.basic.slice('Basic '.length),
        SECRET,
      ]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toMatch(/authorization"\s*:\s*"(Basic|Bearer)/i);
    } finally {
      await logged.close();
    }
  });
});
