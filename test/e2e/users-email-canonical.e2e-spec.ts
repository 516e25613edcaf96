import { randomBytes } from 'node:crypto';

import fc from 'fast-check';
import { DataSource } from 'typeorm';

import { UsersEmailCanonical1764000001000 } from '../../src/users/migrations/1764000001000-users-email-canonical';
import { PasswordHasher } from '../../src/users/password-hasher';
import { address, INVISIBLES, variantOf, withInserted } from '../support/email-forms';
import { migrateFromOldSchema } from '../support/migrations';
import { expectProblem } from '../support/problems';
import { propertyRuns } from '../support/property-runs';
import { startTestApp, TestApp } from '../support/test-app';
import { basicHeader } from '../support/users';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** A fresh local part, so that each test has addresses of its own. */
const fresh = (local: string) => `${local}${randomBytes(4).toString('hex')}`;
const signUp = (email: string, password = 'password-1') =>
  t.request({ method: 'POST', url: '/user/signup', payload: { email, password } });
const token = (email: string, password: string) =>
  t.request({ method: 'POST', url: '/auth/token', payload: { email, password } });
const me = (authorization: string) => t.request({ method: 'GET', url: '/me', headers: { authorization } });

describe('POST /user/signup, look-alike addresses', () => {
  it.each([
    ['NFC, then NFD', (l: string) => [`jos\u00e9${l}@example.com`, `jose\u0301${l}@example.com`]],
    ['NFD, then NFC', (l: string) => [`jose\u0301${l}@example.com`, `jos\u00e9${l}@example.com`]],
    ['plain, then a fullwidth letter', (l: string) => [`bob${l}@example.com`, `\uff42ob${l}@example.com`]],
    ['plain, then a fullwidth domain', (l: string) => [`bob${l}@example.com`, `bob${l}@\uff45\uff58ample.com`]],
    [
      'an IDNA ASCII domain, then the Unicode one',
      (l: string) => [`ann${l}@xn--bcher-kva.com`, `ann${l}@b\u00fccher.com`],
    ],
    [
      'a Unicode domain, then the IDNA ASCII one',
      (l: string) => [`ann${l}@b\u00fccher.com`, `ann${l}@XN--BCHER-KVA.COM`],
    ],
    [
      'lower case, then upper case with a decomposed domain',
      (l: string) => [`ann${l}@b\u00fccher.com`, `ANN${l.toUpperCase()}@BU\u0308CHER.COM`],
    ],
  ])('answers 409 to the second of %s', async (_label, pair) => {
    const [first, second] = pair(fresh('-'));
    expect((await signUp(first)).statusCode).toBe(201);
    expectProblem(await signUp(second, 'password-2'), 409, 'email-taken');
  });

  it.each([
    ['a zero-width space', 'ann\u200b'],
    ['a zero-width joiner', 'an\u200dn'],
    ['a soft hyphen', 'an\u00adn'],
    ['a right-to-left override', 'ann\u202etxt.'],
    ['a byte order mark', 'an\ufeffn'],
    ['a line separator', 'an\u2028n'],
  ])('refuses an address holding %s with 400 naming email, and creates no account', async (_label, local) => {
    const email = `${local}${fresh('')}@example.com`;
    const body = expectProblem(await signUp(email), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'email', message: expect.stringContaining('invisible characters') }]);
    const [{ count }] = await t.app
      .get(DataSource)
      .query('SELECT count(*)::int AS count FROM users WHERE email LIKE $1', [`%${email.slice(-20)}`]);
    expect(count).toBe(0);
  });

  it.each([
    ['the local part', (l: string) => `\u0441at${l}@example.com`],
    ['a domain label', (l: string) => `cat${l}@exam\u0441le.com`],
    ['a domain label sent in IDNA ASCII form', (l: string) => `cat${l}@xn--examle-lrf.com`],
  ])('refuses a Cyrillic letter among Latin ones in %s with 400 naming email', async (_label, email) => {
    const body = expectProblem(await signUp(email(fresh('-'))), 400, 'validation');
    expect(body.errors).toEqual([
      { field: 'email', message: expect.stringContaining('must not mix Latin, Cyrillic or Greek') },
    ]);
  });

  it('stores the address to show (local part as written, Unicode domain) and its canonical form', async () => {
    const local = fresh('Jose\u0301-');
    const res = await signUp(` ${local}@XN--BCHER-KVA.com `);
    expect(res.statusCode).toBe(201);
    const [row] = await t.app
      .get(DataSource)
      .query('SELECT email, email_canonical FROM users WHERE id = $1', [res.json().id]);
    const written = local.normalize('NFC');
    expect(row).toEqual({
      email: `${written}@b\u00fccher.com`,
      email_canonical: `${written.toLowerCase()}@xn--bcher-kva.com`,
    });
  });

  it('gives one 201 to any number of spellings of an address, the others 409 or (with an invisible character) 400, never a 500', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        address.chain((email) =>
          fc.tuple(
            fc.constant(email),
            fc.array(
              fc.oneof(
                variantOf(email),
                variantOf(email).chain((v) => withInserted(v.trim(), fc.constantFrom(...INVISIBLES))),
              ),
              {
                minLength: 1,
                maxLength: 4,
              },
            ),
          ),
        ),
        async ([email, variants]) => {
          // A prefix per run keeps runs apart: two runs may draw the same address.
          const prefix = `p${++run}${randomBytes(3).toString('hex')}.`;
          const first = await signUp(prefix + email);
          expect(first.statusCode).toBe(201);
          for (const variant of variants) {
            const res = await signUp(prefix + variant.trimStart());
            expect([400, 409]).toContain(res.statusCode);
            if (res.statusCode === 400)
              expect(res.json().errors).toEqual([{ field: 'email', message: expect.any(String) }]);
          }
        },
      ),
      propertyRuns(15),
    );
  });
});

describe('sign-in with another spelling of the address', () => {
  const password = 'password-signin';
  let id: number;
  let local: string;

  beforeAll(async () => {
    local = fresh('jos\u00e9-');
    const res = await signUp(`${local}@b\u00fccher.com`, password);
    expect(res.statusCode).toBe(201);
    id = res.json().id;
  });

  const spellings = (): [string, string][] => [
    ['NFD', `${local.normalize('NFD')}@bu\u0308cher.com`],
    ['IDNA ASCII domain', `${local}@xn--bcher-kva.com`],
    ['upper case', `${local.toUpperCase()}@B\u00dcCHER.COM`],
    ['fullwidth domain', `${local}@\uff42\u00fccher\uff0ecom`],
  ];

  it('issues a token on POST /auth/token for each spelling, for the same user', async () => {
    for (const [label, email] of spellings()) {
      const res = await token(email, password);
      expect({ label, status: res.statusCode }).toEqual({ label, status: 201 });
      const who = await me(`Bearer ${res.json().token}`);
      expect(who.json()).toEqual({ id, name: null });
    }
  });

  it('accepts each spelling as Basic credentials on GET /me', async () => {
    for (const [label, email] of spellings()) {
      const res = await me(basicHeader(email, password));
      expect({ label, status: res.statusCode, body: res.json() }).toEqual({
        label,
        status: 200,
        body: { id, name: null },
      });
    }
  });

  it('answers an address with an invisible character with 400 on POST /auth/token and 401 as Basic', async () => {
    const email = `${local}\u200b@b\u00fccher.com`;
    const body = expectProblem(await token(email, password), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'email', message: expect.stringContaining('invisible characters') }]);
    expectProblem(await me(basicHeader(email, password)), 401);
  });
});

describe('migration UsersEmailCanonical1764000001000', () => {
  it('keeps the oldest of colliding old-form rows, sets the others aside and lists their ids, and leaves the table unique', async () => {
    const dataSource = t.app.get(DataSource);
    const migration = new UsersEmailCanonical1764000001000();
    const hash = await t.app.get(PasswordHasher).hash('old-password');
    const tag = randomBytes(4).toString('hex');
    const ids: Record<string, number> = {};
    // Rows as the code before the migration kept them (trimmed, lower-cased).
    await migrateFromOldSchema(dataSource, migration, async (q) => {
      const insert = async (key: string, email: string, createdAt: string) => {
        const [{ id }] = await q.query(
          `INSERT INTO users (email, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id`,
          [email, hash, createdAt],
        );
        ids[key] = id;
      };
      await insert('nfc', `jos\u00e9${tag}@old.example`, '2020-01-01T00:00:00Z');
      await insert('nfd', `jose\u0301${tag}@old.example`, '2021-01-01T00:00:00Z');
      // The newer of these two already holds the canonical form itself: it is still the one set aside.
      await insert('plain', `bob${tag}@old.example`, '2022-01-01T00:00:00Z');
      await insert('fullwidth', `\uff42ob${tag}@old.example`, '2019-01-01T00:00:00Z');
      await insert('ascii', `ann${tag}@xn--bcher-kva.example`, '2021-06-01T00:00:00Z');
      await insert('unicode', `ann${tag}@b\u00fccher.example`, '2021-07-01T00:00:00Z');
      await insert('unicode2', `ann${tag}@bu\u0308cher.example`, '2021-08-01T00:00:00Z');
      await insert('invisible', `an\u200bn${tag}@old.example`, '2020-01-01T00:00:00Z');
      await insert('alone', `solo${tag}@old.example`, '2020-01-01T00:00:00Z');
    });

    const rows: { id: number; email: string; email_canonical: string | null }[] = await dataSource.query(
      'SELECT id, email, email_canonical FROM users WHERE id = ANY($1::int[])',
      [Object.values(ids)],
    );
    const canonicalOf = (key: string) => rows.find((r) => r.id === ids[key])!.email_canonical;
    expect(Object.fromEntries(Object.keys(ids).map((key) => [key, canonicalOf(key)]))).toEqual({
      nfc: `jos\u00e9${tag}@old.example`,
      nfd: null,
      plain: null,
      fullwidth: `bob${tag}@old.example`,
      ascii: `ann${tag}@xn--bcher-kva.example`,
      unicode: null,
      unicode2: null,
      invisible: null,
      alone: `solo${tag}@old.example`,
    });
    // No account deleted, no email rewritten.
    expect(rows.map((r) => r.email).sort()).toHaveLength(9);
    expect(rows.find((r) => r.id === ids.nfd)!.email).toBe(`jose\u0301${tag}@old.example`);

    const duplicates = await dataSource.query(
      'SELECT email_canonical FROM users WHERE email_canonical IS NOT NULL GROUP BY email_canonical HAVING count(*) > 1',
    );
    expect(duplicates).toEqual([]);
    await expect(
      dataSource.query(`INSERT INTO users (email, email_canonical, password_hash) VALUES ('x', $1, 'x')`, [
        `bob${tag}@old.example`,
      ]),
    ).rejects.toMatchObject({
      driverError: expect.objectContaining({ code: '23505', constraint: 'users_email_canonical_key' }),
    });

    const warnings = t.logs
      .map((line) => JSON.parse(line))
      .filter((l) => l.level === 40 && String(l.msg).includes('can no longer sign in by email'));
    const collided = warnings.find((w) => String(w.msg).includes('share'))?.msg as string;
    expect(collided).toContain(`${ids.nfd} (same address as ${ids.nfc})`);
    expect(collided).toContain(`${ids.plain} (same address as ${ids.fullwidth})`);
    expect(collided).toContain(`${ids.unicode}, ${ids.unicode2} (same address as ${ids.ascii})`);
    expect(warnings.find((w) => String(w.msg).includes('now refused'))?.msg).toContain(String(ids.invisible));
    expect(JSON.stringify(warnings)).not.toContain(tag); // ids, not addresses

    // The oldest account signs in with any spelling; the ones set aside with none.
    const signedIn = await token(`\uff42OB${tag}@old.example`, 'old-password');
    expect(signedIn.statusCode).toBe(201);
    expect((await me(`Bearer ${signedIn.json().token}`)).json().id).toBe(ids.fullwidth);
    expect((await me(basicHeader(`jose\u0301${tag}@old.example`, 'old-password'))).json().id).toBe(ids.nfc);
  });
});
