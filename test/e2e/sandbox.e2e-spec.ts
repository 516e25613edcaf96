import { connect } from 'node:net';

import type { Response } from 'light-my-request';

import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { createKey, newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { newUser } from '../support/users';

/**
 * A live and a sandbox instance side by side, each on its own database (embedded, or with
 * DATABASE_URL a database each on that server), as docs/operations.md says to deploy them.
 */
const ORIGIN = 'https://app.example.org';
const PUBLIC_BASE_URL = 'https://api.example.org';
const SANDBOX_BASE_URL = 'https://sandbox.example.org';

let live: TestApp;
let sandbox: TestApp;
let liveRegion: RegionFixture;
let sandboxRegion: RegionFixture;

beforeAll(async () => {
  // One JWT_SECRET for both, as a careless operator might set it: tokens must still not cross.
  const shared = {
    CORS_ORIGINS: ORIGIN,
    PUBLIC_BASE_URL,
    SANDBOX_BASE_URL,
    JWT_SECRET: 'one-secret-for-both-environments-0123456789',
  };
  [live, sandbox] = await Promise.all([
    startTestApp(shared),
    // Unset, as an operator's sandbox has it: the sandbox seeds its samples on any database.
    startTestApp({ ...shared, API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: '' }),
  ]);
  [liveRegion, sandboxRegion] = await Promise.all([newRegion(live), newRegion(sandbox)]);
});
afterAll(async () => {
  await Promise.all([live?.close(), sandbox?.close()]);
});

const me = (t: TestApp, key: string) =>
  t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });

describe('keys say their environment', () => {
  it('issues rk_test_ keys in the sandbox and rk_ keys in live, each accepted where it was issued', async () => {
    expect(sandboxRegion.key).toMatch(/^rk_test_[0-9A-Za-z]{49}$/);
    expect(liveRegion.key).toMatch(/^rk_[0-9A-Za-z]{49}$/);
    const created = await createKey(sandbox, sandboxRegion.key, 'ci');
    expect(created.key).toMatch(/^rk_test_/);
    expect(created.tokenPreview).toBe(`rk_test_\u2026${created.key.slice(-4)}`);
    expect((await me(sandbox, created.key)).statusCode).toBe(200);
    expect((await me(sandbox, sandboxRegion.key)).statusCode).toBe(200);
    expect((await me(live, liveRegion.key)).statusCode).toBe(200);
  });

  it('refuses a sandbox key in live with a 401 that says it is a sandbox key', async () => {
    const res = await me(live, sandboxRegion.key);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    // Type URIs are absolute against each environment's own base URL.
    expect(res.json()).toMatchObject({
      status: 401,
      type: `${PUBLIC_BASE_URL}/problems/unauthenticated`,
      detail: expect.stringMatching(/^This is a sandbox API key .*this is the live API/),
    });
  });

  it('refuses a live key in the sandbox with a 401 that says it is a live key', async () => {
    const res = await me(sandbox, liveRegion.key);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({
      status: 401,
      type: `${SANDBOX_BASE_URL}/problems/unauthenticated`,
      detail: expect.stringMatching(/^This is a live API key .*this is the sandbox API/),
    });
  });

  it('says nothing of an environment for a key that is no key of either', async () => {
    for (const [t, key] of [
      [live, `rk_test_${'a'.repeat(49)}`],
      [sandbox, `rk_${'a'.repeat(49)}`],
      [sandbox, generateApiKey('sandbox')],
    ] as const) {
      const res = await me(t, key);
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toBe('Send a valid, active region API key in the X-API-Key header.');
    }
  });
});

describe('user tokens say their environment', () => {
  it('refuses a sandbox token in live and a live token in the sandbox, even with one JWT_SECRET for both', async () => {
    // Users of both databases with the same id, which a token's `sub` alone would confuse
    // (the sandbox's samples already have a user).
    const sandboxUser = await newUser(sandbox);
    let liveUser = await newUser(live);
    while (liveUser.id < sandboxUser.id) liveUser = await newUser(live);
    expect(liveUser.id).toBe(sandboxUser.id);
    const meWith = (t: TestApp, bearer: string) =>
      t.request({ method: 'GET', url: '/me', headers: { authorization: bearer } });
    expect((await meWith(live, liveUser.bearer)).statusCode).toBe(200);
    expect((await meWith(sandbox, sandboxUser.bearer)).statusCode).toBe(200);
    expect((await meWith(live, sandboxUser.bearer)).statusCode).toBe(401);
    expect((await meWith(sandbox, liveUser.bearer)).statusCode).toBe(401);
  });
});

describe('X-API-Environment', () => {
  const answers = (t: TestApp, key: string): Promise<[string, Response][]> =>
    Promise.all(
      (
        [
          ['200', { method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } }],
          ['401', { method: 'GET', url: '/auth/regions/me' }],
          ['404', { method: 'GET', url: '/no/such/route' }],
          [
            '400 malformed JSON',
            {
              method: 'POST',
              url: '/auth/region/api-keys',
              headers: { 'x-api-key': key, 'content-type': 'application/json' },
              payload: '{"description": ',
            },
          ],
          ['probe', { method: 'GET', url: '/health/live' }],
          ['docs', { method: 'GET', url: '/docs-json' }],
          [
            'preflight',
            {
              method: 'OPTIONS',
              url: '/auth/regions/me',
              headers: {
                origin: ORIGIN,
                'access-control-request-method': 'GET',
                'access-control-request-headers': 'x-api-key',
              },
            },
          ],
        ] as const
      ).map(async ([label, options]) => [label, await t.app.inject(options)] as [string, Response]),
    );

  it('marks every sandbox answer, errors, 404s, probes and CORS preflights included, and CORS exposes it', async () => {
    const got = await answers(sandbox, sandboxRegion.key);
    expect(got.map(([label, res]) => [label, res.statusCode, res.headers['x-api-environment']])).toEqual([
      ['200', 200, 'sandbox'],
      ['401', 401, 'sandbox'],
      ['404', 404, 'sandbox'],
      ['400 malformed JSON', 400, 'sandbox'],
      ['probe', 200, 'sandbox'],
      ['docs', 200, 'sandbox'],
      ['preflight', 204, 'sandbox'],
    ]);
    const cors = await sandbox.app.inject({ method: 'GET', url: '/planets', headers: { origin: ORIGIN } });
    expect(cors.headers['access-control-expose-headers']).toContain('X-API-Environment');
  });

  it('marks nothing in live', async () => {
    const got = await answers(live, liveRegion.key);
    expect(got.map(([label, res]) => [label, res.statusCode, res.headers['x-api-environment']])).toEqual([
      ['200', 200, undefined],
      ['401', 401, undefined],
      ['404', 404, undefined],
      ['400 malformed JSON', 400, undefined],
      ['probe', 200, undefined],
      ['docs', 200, undefined],
      ['preflight', 204, undefined],
    ]);
  });

  it('marks the answers written before the request reaches the router: a malformed URL, and what the HTTP parser refuses', async () => {
    const badUrl = (t: TestApp) => t.app.inject({ method: 'GET', url: '/planets/%E0%A4%A' });
    expect((await badUrl(sandbox)).json().detail).toBe(
      'The URL is malformed: a percent-escape in it is not %XX, or does not decode to UTF-8.',
    );
    expect([(await badUrl(sandbox)).statusCode, (await badUrl(sandbox)).headers['x-api-environment']]).toEqual([
      400,
      'sandbox',
    ]);
    expect((await badUrl(live)).headers['x-api-environment']).toBeUndefined();

    const rawAnswer = async (t: TestApp): Promise<string> => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.getHttpServer().address() as { port: number };
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let text = '';
        socket.on('data', (chunk) => (text += String(chunk)));
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.write('NOT HTTP AT ALL\r\n\r\n');
      });
    };
    const [sandboxRaw, liveRaw] = await Promise.all([rawAnswer(sandbox), rawAnswer(live)]);
    expect(sandboxRaw).toMatch(/^HTTP\/1\.1 400 /);
    expect(sandboxRaw).toMatch(/\r\nX-API-Environment: sandbox\r\n/);
    expect(liveRaw).toMatch(/^HTTP\/1\.1 400 /);
    expect(liveRaw).not.toMatch(/X-API-Environment/i);
  });
});

describe('the documentation', () => {
  it('/docs of the sandbox says so at the top; live says nothing of it', async () => {
    const page = await sandbox.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<title>[^<]*\(sandbox\)<\/title>/);
    const document = (await sandbox.request({ method: 'GET', url: '/docs-json' })).json();
    expect(document.info.title).toMatch(/\(sandbox\)$/);
    expect(document.info.description).toMatch(/^> \*\*Sandbox\.\*\* This is the sandbox/);

    const livePage = await live.app.inject({ method: 'GET', url: '/docs' });
    expect(livePage.body).not.toContain('(sandbox)');
    expect((await live.request({ method: 'GET', url: '/docs-json' })).json().info.description).not.toMatch(
      /^> \*\*Sandbox/,
    );
  });

  it('lists both base URLs in servers, the environment that serves the document first', async () => {
    const servers = async (t: TestApp) => (await t.request({ method: 'GET', url: '/docs-json' })).json().servers;
    expect(await servers(sandbox)).toEqual([
      { url: SANDBOX_BASE_URL, description: 'Sandbox (test data, rk_test_ keys)' },
      { url: PUBLIC_BASE_URL, description: 'Live' },
    ]);
    expect(await servers(live)).toEqual([
      { url: PUBLIC_BASE_URL, description: 'Live' },
      { url: SANDBOX_BASE_URL, description: 'Sandbox (test data, rk_test_ keys)' },
    ]);
  });
});

describe('sample data', () => {
  it('the sandbox starts with the sample planets, on the embedded database and on PostgreSQL alike', async () => {
    const planets = (await sandbox.request({ method: 'GET', url: '/planets?limit=100' })).json().data as {
      name: string;
    }[];
    expect(planets.map((p) => p.name)).toEqual(['Mars', 'Earth', 'Jupiter', 'Neptune', 'Pluto', 'HD 40307g']);
    // The live instance beside it was started with SEED_SAMPLE_DATA=false (the tests' default).
    expect((await live.request({ method: 'GET', url: '/planets' })).json().data).toEqual([]);
  });
});
