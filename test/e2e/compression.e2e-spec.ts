import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

import { newRegion, startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';
import { createPlanet, fixture, multipart } from './planets-support';

/**
 * Bodies of 1 KiB and more go out compressed (br or gzip) when the client accepts it;
 * smaller ones, images and responses carrying a secret (Cache-Control: no-store) never.
 */

let t: TestApp;
let alice: UserFixture;

beforeAll(async () => {
  t = await startTestApp({ MAX_API_KEYS_PER_REGION: '1000' });
  alice = await newUser(t, { name: 'Alice' });
  for (let i = 0; i < 30; i++)
    await createPlanet(t, alice, {
      name: `Planet ${i}`,
      description: `Planet number ${i} of the compression suite`,
      tags: ['compressed'],
    });
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers });
const varies = (res: { headers: Record<string, unknown> }) =>
  String(res.headers.vary ?? '')
    .toLowerCase()
    .split(/\s*,\s*/)
    .includes('accept-encoding');

describe('a page of planets', () => {
  it('comes gzip-compressed to a client that accepts gzip, and decompresses to the same JSON', async () => {
    const plain = await get('/planets?limit=100');
    const gzipped = await get('/planets?limit=100', { 'accept-encoding': 'gzip' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Buffer.byteLength(plain.body)).toBeGreaterThan(1024);
    expect(gzipped.statusCode).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['content-type']).toBe(plain.headers['content-type']);
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.rawPayload.length);
    expect(gzipped.rawPayload.length).toBeLessThan(Buffer.byteLength(plain.body) / 2);
    expect(JSON.parse(gunzipSync(gzipped.rawPayload).toString('utf8'))).toEqual(plain.json());
    // Headers other than the body's are as they were.
    expect(gzipped.headers['x-pagination-total']).toBe(plain.headers['x-pagination-total']);
    // Both vary by Accept-Encoding, so that a cache keeps them apart.
    expect(varies(plain)).toBe(true);
    expect(varies(gzipped)).toBe(true);
  });

  it('comes in br to a client that prefers it, and in the coding the client weighs highest', async () => {
    const plain = (await get('/planets?limit=100')).json();
    const br = await get('/planets?limit=100', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString('utf8'))).toEqual(plain);
    expect((await get('/planets?limit=100', { 'accept-encoding': 'br;q=0.5, gzip' })).headers['content-encoding']).toBe(
      'gzip',
    );
    expect((await get('/planets?limit=100', { 'accept-encoding': 'gzip;q=0.5, br' })).headers['content-encoding']).toBe(
      'br',
    );
  });

  it.each([['identity'], ['gzip;q=0'], ['deflate'], ['compress, x-unknown']])(
    'is sent as it is for Accept-Encoding: %s',
    async (acceptEncoding) => {
      const res = await get('/planets?limit=100', { 'accept-encoding': acceptEncoding });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.json().data).toHaveLength(30);
    },
  );

  it.each([
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *', 'gzip'],
    ['gzip;q=0, br;q=0, *', undefined],
    ['*;q=0, gzip;q=0.1', 'gzip'],
    ['identity;q=0', undefined],
    ['identity;q=0, br;q=0, gzip;q=0', undefined],
    ['BR;Q=0, GZIP;q=1.0', 'gzip'],
    ['gzip;q=0.0001, br;q=2', undefined],
  ])('honours the weights and wildcard of Accept-Encoding: %s (q=0 is never sent)', async (acceptEncoding, coding) => {
    const res = await get('/planets?limit=100', { 'accept-encoding': acceptEncoding });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
  });

  it('answers HEAD without a body', async () => {
    // HEAD is not an operation of the document, so it is not checked against it.
    const res = await t.app.inject({
      method: 'HEAD',
      url: '/planets?limit=100',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.length).toBe(0);
    expect(res.headers['x-pagination-total']).toBe('30');
  });
});

/** What a HEAD must say as its GET does (RFC 9110, section 9.3.2); Content-Length is compared apart. */
const FIELDS = ['content-encoding', 'content-type', 'vary', 'etag', 'x-pagination-total'] as const;
const fieldsOf = (res: { headers: Record<string, unknown> }) =>
  Object.fromEntries(FIELDS.map((name) => [name, res.headers[name]]));
// HEAD is not an operation of the document, so it is not checked against it.
const head = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'HEAD', url, headers });

describe('HEAD', () => {
  let large: { id: number };
  beforeAll(async () => {
    large = await createPlanet(t, alice, { name: 'Headed', description: 'x'.repeat(1500) });
  });

  it.each([['gzip'], ['br'], ['identity'], [undefined]])(
    'says what GET says with Accept-Encoding: %s (the coding, Vary, the coded ETag), and no body',
    async (acceptEncoding) => {
      const headers: Record<string, string> = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding };
      const coding = acceptEncoding === 'gzip' || acceptEncoding === 'br' ? acceptEncoding : undefined;
      for (const url of ['/planets?limit=100', `/planets/${large.id}`, '/planets?limit=1']) {
        const [got, headed] = [await get(url, headers), await head(url, headers)];
        expect(got.statusCode).toBe(200);
        expect({ url, status: headed.statusCode, fields: fieldsOf(headed) }).toEqual({
          url,
          status: 200,
          fields: fieldsOf(got),
        });
        expect(headed.rawPayload.length).toBe(0);
        expect(varies(headed)).toBe(true);
        const compressed = url !== '/planets?limit=1' && coding !== undefined;
        expect({ url, coding: got.headers['content-encoding'] }).toEqual({
          url,
          coding: compressed ? coding : undefined,
        });
        // A compressed body's length is known only by compressing it: HEAD leaves it out, else it is GET's.
        if (!compressed) expect(headed.headers['content-length']).toBe(got.headers['content-length']);
        else expect(headed.headers['content-length']).toBeUndefined();
      }
      expect((await get(`/planets/${large.id}`, headers)).headers.etag).toMatch(
        coding === undefined ? /^"[0-9a-f]{64}"$/ : new RegExp(`^"[0-9a-f]{64}-${coding}"$`),
      );
    },
  );

  it('answers If-None-Match as GET does: 304 with the same ETag', async () => {
    const gzipped = await get(`/planets/${large.id}`, { 'accept-encoding': 'gzip' });
    const headers = { 'accept-encoding': 'gzip', 'if-none-match': String(gzipped.headers.etag) };
    const [got, headed] = [await get(`/planets/${large.id}`, headers), await head(`/planets/${large.id}`, headers)];
    expect(got.statusCode).toBe(304);
    expect({ status: headed.statusCode, fields: fieldsOf(headed) }).toEqual({ status: 304, fields: fieldsOf(got) });
    expect(headed.headers['content-encoding']).toBeUndefined();
  });
});

describe("a 304's ETag", () => {
  let plainTag: string;
  let large: { id: number };
  const coded = (coding: string) => `${plainTag.slice(0, -1)}-${coding}"`;
  beforeAll(async () => {
    large = await createPlanet(t, alice, { name: 'Revalidated', description: 'x'.repeat(1500) });
    plainTag = String((await get(`/planets/${large.id}`)).headers.etag);
  });

  // The tag a 200 to the request carries: only that one is held by whoever got that 200, and a
  // 304 carrying another could not be matched to what a cache holds (RFC 9111, section 4.3.4).
  it.each([
    [undefined, 'plain', 304],
    [undefined, 'gzip', 200],
    ['gzip', 'plain', 200],
    ['gzip', 'gzip', 304],
    ['gzip', 'W/gzip', 304],
    ['gzip', 'br', 200],
    ['br', 'plain', 200],
    ['br', 'gzip', 200],
    ['br', 'br', 304],
    ['identity', 'gzip', 200],
  ])(
    'is the ETag a 200 would carry, with Accept-Encoding: %s and If-None-Match the %s tag (%s)',
    async (acceptEncoding, heldForm, status) => {
      const headers: Record<string, string> = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding };
      const sent = String((await get(`/planets/${large.id}`, headers)).headers.etag);
      const weak = heldForm.startsWith('W/');
      const form = heldForm.replace('W/', '');
      const held = `${weak ? 'W/' : ''}${form === 'plain' ? plainTag : coded(form)}`;
      const res = await get(`/planets/${large.id}`, { ...headers, 'if-none-match': held });
      expect({ held: heldForm, status: res.statusCode, etag: res.headers.etag }).toEqual({
        held: heldForm,
        status,
        etag: sent,
      });
      expect(varies(res)).toBe(true);
      if (status === 304) expect(res.headers['content-encoding']).toBeUndefined();
    },
  );

  it('is the plain tag whatever the Accept-Encoding for a body under 1 KiB, which is never compressed', async () => {
    const small = await createPlanet(t, alice, { name: 'Small' });
    const etag = String((await get(`/planets/${small.id}`)).headers.etag);
    for (const acceptEncoding of ['gzip', 'br']) {
      const res = await get(`/planets/${small.id}`, { 'accept-encoding': acceptEncoding, 'if-none-match': etag });
      expect({ acceptEncoding, status: res.statusCode, etag: res.headers.etag }).toEqual({
        acceptEncoding,
        status: 304,
        etag,
      });
    }
  });
});

describe('is never applied to', () => {
  it('bodies under 1 KiB', async () => {
    const small = await get('/planets?limit=1', { 'accept-encoding': 'gzip, br' });
    expect(Buffer.byteLength(small.body)).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.json().data).toHaveLength(1);
    const problem = await get('/planets/2147483647', { 'accept-encoding': 'gzip, br' });
    expect(problem.statusCode).toBe(404);
    expect(problem.headers['content-encoding']).toBeUndefined();
  });

  it('responses carrying a secret (Cache-Control: no-store), however large', async () => {
    const region = await newRegion(t);
    // Enough networks that the body with the key in it is well over 1 KiB.
    const allowedCidrs = Array.from({ length: 40 }, (_, i) => `2001:db8:${(i + 1).toString(16)}::/48`);
    const created = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': region.key, 'accept-encoding': 'gzip, br' },
      payload: { description: 'd'.repeat(255), allowedCidrs },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.headers['content-encoding']).toBeUndefined();
    expect(Buffer.byteLength(created.body)).toBeGreaterThan(1024);
    expect(created.json().key).toMatch(/^rk_/);

    const rolled = await t.request({
      method: 'POST',
      url: `/auth/region/api-keys/${created.json().id}/roll`,
      headers: { 'x-api-key': region.key, 'accept-encoding': 'gzip' },
      payload: {},
    });
    expect(rolled.statusCode).toBe(201);
    expect(rolled.headers['content-encoding']).toBeUndefined();
    expect(Buffer.byteLength(rolled.body)).toBeGreaterThan(1024);

    const token = await t.request({
      method: 'POST',
      url: '/auth/token',
      headers: { 'accept-encoding': 'gzip' },
      payload: { email: alice.email, password: alice.password },
    });
    expect(token.statusCode).toBe(201);
    expect(token.headers['cache-control']).toBe('no-store');
    expect(token.headers['content-encoding']).toBeUndefined();
  });

  it('images, whose formats are compressed already; their ETag and 304 are as without compression', async () => {
    const planet = await createPlanet(t, alice, { name: 'Imaged' });
    const png = Buffer.concat([fixture('mars.png'), Buffer.alloc(4096)]);
    const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: png }]);
    const upload = await t.request({
      method: 'POST',
      url: `/planets/${planet.id}/image`,
      headers: { authorization: alice.basic, ...form.headers },
      payload: form.payload,
    });
    expect(upload.statusCode).toBe(200);
    const image = await get(`/planets/${planet.id}/image`, { 'accept-encoding': 'gzip, br' });
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-encoding']).toBeUndefined();
    expect(image.rawPayload.equals(png)).toBe(true);
    expect(image.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    const again = await get(`/planets/${planet.id}/image`, {
      'accept-encoding': 'gzip',
      'if-none-match': String(image.headers.etag),
    });
    expect(again.statusCode).toBe(304);
    expect(again.headers.etag).toBe(image.headers.etag);
  });

  it('a secret goes out only through @SecretResponse(): no controller sets no-store any other way', () => {
    // The routes that carry a secret are told apart as they are registered, not per response:
    // a no-store header set by hand would leave its route compressed.
    const root = join(__dirname, '../../src');
    const sources = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && f !== join('common', 'http', 'compression.ts'),
    );
    const byHand = sources.filter((f) => /no-store/.test(readFileSync(join(root, f), 'utf8')));
    expect(byHand).toEqual([]);
  });
});
