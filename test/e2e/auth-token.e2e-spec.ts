import bcrypt from 'bcrypt';
import { DataSource } from 'typeorm';

import { JwtSettings } from '../../src/auth/jwt-settings';
import { expectProblem } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';
import { basicHeader, decodeJwt, newUser, signJwt, UserFixture } from '../support/users';

const token = (t: TestApp, payload: unknown) =>
  t.request({ method: 'POST', url: '/auth/token', payload: payload as string });
const me = (t: TestApp, authorization: string) => t.request({ method: 'GET', url: '/me', headers: { authorization } });

describe('POST /auth/token', () => {
  let t: TestApp;
  let user: UserFixture;

  beforeAll(async () => {
    t = await startTestApp();
    user = await newUser(t, { name: 'Cam' });
  });
  afterAll(async () => t?.close());

  it('answers 201 { token }: an HS256 JWT whose sub is the user id, valid for an hour, not cached', async () => {
    const res = await token(t, { email: user.email, password: user.password });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.json())).toEqual(['token']);
    const { header, payload } = decodeJwt(res.json().token);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({ sub: String(user.id), iat: expect.any(Number), exp: expect.any(Number) });
    expect(Number(payload.exp) - Number(payload.iat)).toBe(3600);
    expect((await me(t, `Bearer ${res.json().token}`)).json()).toEqual({ id: user.id, name: 'Cam' });
  });

  it('takes the email trimmed and in any case', async () => {
    const res = await token(t, { email: `  ${user.email.toUpperCase()} `, password: user.password });
    expect(res.statusCode).toBe(201);
    expect(decodeJwt(res.json().token).payload.sub).toBe(String(user.id));
  });

  it('gives the same 401 for a wrong password and for an unknown email', async () => {
    const wrongPassword = await token(t, { email: user.email, password: `${user.password}x` });
    const unknownEmail = await token(t, { email: 'nobody-here@example.com', password: user.password });
    const a = expectProblem(wrongPassword, 401, 'unauthenticated');
    const b = expectProblem(unknownEmail, 401, 'unauthenticated');
    expect(a).toEqual(b);
    expect(wrongPassword.headers['www-authenticate']).toBe(unknownEmail.headers['www-authenticate']);
    expect(JSON.stringify(a)).not.toMatch(/exist|unknown|not found/i);
  });

  it.each([
    ['POST /auth/token', (u: UserFixture) => token(t, { email: u.email, password: u.password }), 201],
    ['Basic', (u: UserFixture) => me(t, u.basic), 200],
  ])(
    'through %s, hashes a right password again at the current BCRYPT_COST when its hash has another cost',
    async (_, signIn, status) => {
      const db = t.app.get(DataSource);
      const storedHash = async (id: number) =>
        (await db.query<{ password_hash: string }[]>('SELECT password_hash FROM users WHERE id = $1', [id]))[0]
          .password_hash;
      for (const olderCost of [5, 6]) {
        const u = await newUser(t);
        await db.query('UPDATE users SET password_hash = $1 WHERE id = $2', [
          await bcrypt.hash(u.password, olderCost),
          u.id,
        ]);
        expect((await signIn(u)).statusCode).toBe(status);
        const rehashed = await storedHash(u.id);
        expect(bcrypt.getRounds(rehashed)).toBe(4); // the test BCRYPT_COST
        await expect(bcrypt.compare(u.password, rehashed)).resolves.toBe(true);
        expect((await signIn(u)).statusCode).toBe(status);
        expect(await storedHash(u.id)).toBe(rehashed); // at the current cost: left alone
      }
    },
  );

  it('refuses a password over 72 bytes even when its first 72 bytes are right (no silent truncation)', async () => {
    const exact = 'p'.repeat(72);
    const u = await newUser(t, { password: exact });
    expectProblem(await token(t, { email: u.email, password: `${exact}!` }), 400, 'validation');
    expectProblem(await me(t, basicHeader(u.email, `${exact}!`)), 401);
    expect((await me(t, basicHeader(u.email, exact))).statusCode).toBe(200);
  });

  it.each([
    ['a missing password', { email: 'ann@example.com' }, ['password']],
    ['a missing email', { password: 'password-1' }, ['email']],
    ['an invalid email', { email: 'ann', password: 'password-1' }, ['email']],
    ['an email with a lone surrogate', { email: 'ann@example.co\udfff', password: 'password-1' }, ['email']],
    ['an empty password', { email: 'ann@example.com', password: '' }, ['password']],
    ['a password that is not a string', { email: 'ann@example.com', password: ['password-1'] }, ['password']],
    ['an unknown field', { email: 'ann@example.com', password: 'password-1', scope: 'admin' }, ['scope']],
  ])('refuses %s with 400', async (_label, payload, fields) => {
    const body = expectProblem(await token(t, payload), 400, 'validation');
    expect([...new Set(body.errors.map((e: { field: string }) => e.field))]).toEqual(fields);
  });

  it('warns at start that the secret was generated, without printing it', async () => {
    const warning = t.logs.find((line) => line.includes('JWT_SECRET is not set'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!).level).toBe(40);
    const { secret } = t.app.get(JwtSettings);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(t.logs.join('\n')).not.toContain(secret);
  });

  it('refuses tokens of another instance with its own generated secret, and is unaffected by it', async () => {
    const other = await startTestApp();
    try {
      const stranger = await newUser(other);
      expect(stranger.id).toBe(user.id); // the same id in each database: only the signature tells them apart
      expectProblem(await me(t, stranger.bearer), 401);
      expect((await me(other, stranger.bearer)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
    // Each app authenticates with its own strategies, also once the other has stopped.
    expect((await me(t, user.bearer)).json()).toEqual({ id: user.id, name: 'Cam' });
    expect((await me(t, user.basic)).json()).toEqual({ id: user.id, name: 'Cam' });
  });
});

describe('POST /auth/token with JWT_SECRET, JWT_TTL, JWT_ISSUER and JWT_AUDIENCE set', () => {
  const SECRET = 'a-test-secret-of-at-least-32-characters!';
  let t: TestApp;
  let user: UserFixture;

  beforeAll(async () => {
    t = await startTestApp({
      JWT_SECRET: SECRET,
      JWT_TTL: '120',
      JWT_ISSUER: 'https://api.example',
      JWT_AUDIENCE: 'galaxy-clients',
    });
    user = await newUser(t);
  });
  afterAll(async () => t?.close());

  it('puts iss and aud in the token and uses the configured lifetime', async () => {
    const { payload } = decodeJwt(user.bearer.slice('Bearer '.length));
    expect(payload).toEqual({
      sub: String(user.id),
      iat: expect.any(Number),
      exp: expect.any(Number),
      iss: 'https://api.example',
      aud: 'galaxy-clients',
    });
    expect(Number(payload.exp) - Number(payload.iat)).toBe(120);
    expect((await me(t, user.bearer)).statusCode).toBe(200);
    expect(t.logs.some((line) => line.includes('JWT_SECRET is not set'))).toBe(false);
  });

  it('refuses a correctly signed token with a wrong or missing issuer or audience', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: String(user.id), iat: now, exp: now + 60, iss: 'https://api.example', aud: 'galaxy-clients' };
    expect((await me(t, `Bearer ${signJwt(claims, SECRET)}`)).statusCode).toBe(200);
    for (const forged of [
      { ...claims, iss: 'https://evil.example' },
      { ...claims, aud: 'someone-else' },
      { ...claims, iss: undefined },
      { ...claims, aud: undefined },
    ]) {
      expectProblem(await me(t, `Bearer ${signJwt(forged, SECRET)}`), 401);
    }
  });
});
