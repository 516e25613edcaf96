import { DataSource } from 'typeorm';

import { expectProblem } from '../support/problems';
import { startTestApp, TestApp } from '../support/test-app';
import { basicHeader } from '../support/users';

let t: TestApp;
let n = 0;
const uniqueEmail = (local = 'user') => `${local}-${++n}-${Date.now()}@example.com`;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const signUp = (payload: unknown) => t.request({ method: 'POST', url: '/user/signup', payload: payload as string });

const storedUser = async (id: number) =>
  (
    await t.app
      .get(DataSource)
      .query('SELECT email, email_canonical, name, password_hash FROM users WHERE id = $1', [id])
  )[0] as { email: string; email_canonical: string; name: string | null; password_hash: string } | undefined;

describe('POST /user/signup', () => {
  it('creates a user and answers 201 with { id, name } only', async () => {
    const res = await signUp({ name: 'Marc', email: uniqueEmail(), password: 'i-love-scalar' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ id: expect.any(Number), name: 'Marc' });
    expect(Number.isInteger(res.json().id)).toBe(true);
    expect(res.body).not.toContain('i-love-scalar');
  });

  it("ignores an id sent with the user (the Galaxy's User, whose id is read-only): the server picks it", async () => {
    const first = await signUp({ email: uniqueEmail(), password: 'password-1' });
    const taken = first.json().id as number;
    const res = await signUp({ id: taken, name: 'Galaxy client', email: uniqueEmail(), password: 'password-1' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(Number), name: 'Galaxy client' });
    expect(res.json().id).not.toBe(taken);
    expect((await storedUser(taken))?.name).toBeNull();
  });

  it('takes the name as optional: absent or null gives null', async () => {
    const absent = await signUp({ email: uniqueEmail(), password: 'password-1' });
    expect(absent.statusCode).toBe(201);
    expect(absent.json().name).toBeNull();
    const explicitNull = await signUp({ name: null, email: uniqueEmail(), password: 'password-1' });
    expect(explicitNull.statusCode).toBe(201);
    expect(explicitNull.json().name).toBeNull();
  });

  it('stores the email trimmed (its canonical form lower-cased), and the password only as a bcrypt hash', async () => {
    const email = uniqueEmail('Mixed.Case');
    const res = await signUp({ email: `  ${email.toUpperCase()}  `, password: 'stored-as-hash' });
    expect(res.statusCode).toBe(201);
    const row = await storedUser(res.json().id);
    expect(row?.email).toBe(`${email.split('@')[0].toUpperCase()}@example.com`);
    expect(row?.email_canonical).toBe(email.toLowerCase());
    expect(row?.password_hash).toMatch(/^\$2b\$04\$/); // cost 4 in tests (BCRYPT_COST)
    expect(row?.password_hash).not.toContain('stored-as-hash');
  });

  it('refuses a taken email in another case and with spaces with 409, leaving the first account as it was', async () => {
    const email = uniqueEmail();
    const first = await signUp({ name: 'First', email, password: 'first-password' });
    expect(first.statusCode).toBe(201);
    const second = await signUp({ name: 'Second', email: ` ${email.toUpperCase()} `, password: 'second-password' });
    expectProblem(second, 409, 'email-taken');
    const me = await t.request({
      method: 'GET',
      url: '/me',
      headers: { authorization: basicHeader(email, 'first-password') },
    });
    expect(me.json()).toEqual({ id: first.json().id, name: 'First' });
  });

  it('gives one 201 and 409s to concurrent sign-ups with one email', async () => {
    const email = uniqueEmail();
    const variants = [email, email.toUpperCase(), ` ${email}`, email, email.toUpperCase()];
    const results = await Promise.all(variants.map((e, i) => signUp({ email: e, password: `password-${i}` })));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((r) => r.statusCode === 409)) expectProblem(r, 409, 'email-taken');
    const [{ count }] = await t.app
      .get(DataSource)
      .query('SELECT count(*)::int AS count FROM users WHERE email_canonical = $1', [email]);
    expect(count).toBe(1);
  });

  it('has the database refuse a second account with the same canonical email, whoever writes it', async () => {
    const email = uniqueEmail();
    await t.app
      .get(DataSource)
      .query(`INSERT INTO users (email, email_canonical, password_hash) VALUES ($1, $1, 'x')`, [email]);
    await expect(
      t.app
        .get(DataSource)
        .query(`INSERT INTO users (email, email_canonical, password_hash) VALUES ($1, $2, 'x')`, [
          email.toUpperCase(),
          email,
        ]),
    ).rejects.toMatchObject({
      driverError: expect.objectContaining({ code: '23505', constraint: 'users_email_canonical_key' }),
    });
  });

  it('counts the password in bytes of UTF-8, not characters, at both ends', async () => {
    // 24 euro signs: 24 characters, 72 bytes, the most accepted.
    const longest = await signUp({ email: uniqueEmail(), password: '€'.repeat(24) });
    expect(longest.statusCode).toBe(201);
    // 3 euro signs: 3 characters but 9 bytes, enough.
    const shortInCharacters = await signUp({ email: uniqueEmail(), password: '€€€' });
    expect(shortInCharacters.statusCode).toBe(201);
    // 25 euro signs: only 25 characters, but 75 bytes.
    const tooLong = expectProblem(await signUp({ email: uniqueEmail(), password: '€'.repeat(25) }), 400, 'validation');
    expect(tooLong.errors).toEqual([{ field: 'password', message: expect.stringContaining('72 bytes') }]);
  });

  it('takes an email of up to 254 characters', async () => {
    // A well-formed address (local part 64, labels of at most 63) of exactly `length` characters.
    const emailOf = (length: number) =>
      `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 64 - 1 - 128 - 4)}.com`;
    expect(emailOf(254)).toHaveLength(254);
    expect((await signUp({ email: emailOf(254), password: 'password-1' })).statusCode).toBe(201);
    const body = expectProblem(await signUp({ email: emailOf(255), password: 'password-1' }), 400, 'validation');
    expect(body.errors).toContainEqual({
      field: 'email',
      message: 'email must be shorter than or equal to 254 characters',
    });
  });

  it.each([
    ['an invalid email', { email: 'not-an-email', password: 'password-1' }, ['email']],
    ['an email without a domain', { email: 'ann@', password: 'password-1' }, ['email']],
    ['an email that is not a string', { email: 42, password: 'password-1' }, ['email']],
    ['an email with a lone surrogate', { email: 'a\ud800b@example.com', password: 'password-1' }, ['email']],
    ['a name with a lone surrogate', { name: 'An\udfffn', email: 'ann@example.com', password: 'password-1' }, ['name']],
    ['a missing email', { password: 'password-1' }, ['email']],
    ['a missing password', { email: 'ann@example.com' }, ['password']],
    ['a password of 7 bytes', { email: 'ann@example.com', password: '1234567' }, ['password']],
    ['a password of 73 bytes', { email: 'ann@example.com', password: 'a'.repeat(73) }, ['password']],
    ['a password that is not a string', { email: 'ann@example.com', password: 12345678 }, ['password']],
    ['an empty name', { name: '   ', email: 'ann@example.com', password: 'password-1' }, ['name']],
    [
      'a name over 100 characters',
      { name: 'n'.repeat(101), email: 'ann@example.com', password: 'password-1' },
      ['name'],
    ],
    ['a name that is not a string', { name: 7, email: 'ann@example.com', password: 'password-1' }, ['name']],
    ['a smuggled role', { email: 'ann@example.com', password: 'password-1', role: 'admin' }, ['role']],
    ['an id that is not an integer', { id: '1', email: 'ann@example.com', password: 'password-1' }, ['id']],
    ['an empty body', {}, ['email', 'password']],
  ])('refuses %s with 400 naming the field', async (_label, payload, fields) => {
    const body = expectProblem(await signUp(payload), 400, 'validation');
    expect([...new Set(body.errors.map((e: { field: string }) => e.field))].sort()).toEqual([...fields].sort());
    expect(JSON.stringify(body)).not.toContain('password-1');
  });

  it('refuses malformed JSON and a body that is not an object with 400', async () => {
    const malformed = await t.request({
      method: 'POST',
      url: '/user/signup',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expectProblem(malformed, 400);
    expectProblem(await signUp([{ email: 'ann@example.com', password: 'password-1' }]), 400, 'validation');
  });

  it('creates nothing when it refuses', async () => {
    const email = uniqueEmail();
    await signUp({ email, password: 'short', name: 'x' });
    await signUp({ email, password: 'password-1', role: 'admin' });
    const [{ count }] = await t.app
      .get(DataSource)
      .query('SELECT count(*)::int AS count FROM users WHERE email = $1', [email]);
    expect(count).toBe(0);
  });
});
