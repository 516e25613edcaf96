import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { RegionKeysRepository } from '../../src/region-keys/region-keys.repository';
import { expectProblem } from '../support/problems';
import { createKey, newRegion, RegionFixture, startTestApp, TEST_ENV, TestApp } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const CHALLENGE = 'ApiKey header="X-API-Key"';

let t: TestApp;
let region: RegionFixture;

beforeAll(async () => {
  t = await startTestApp({ MAX_API_KEYS_PER_REGION: '5' });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  region = await newRegion(t);
});

const getRegion = (key: string) => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
const post = (key: string, payload?: unknown, headers: Record<string, string> = {}) =>
  t.request({
    method: 'POST',
    url: '/auth/region/api-keys',
    headers: { 'x-api-key': key, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
const del = (key: string, id: string) =>
  t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } });

describe('GET /auth/regions/me', () => {
  it("returns the caller's region with its active keys, oldest first, and no secrets", async () => {
    const second = await createKey(t, region.key, 'second');
    const third = await createKey(t, region.key, 'third');
    const res = await getRegion(region.key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: region.regionId,
      name: 'Test region',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      apiKeys: [
        expect.objectContaining({ id: region.keyId, description: 'first key' }),
        expect.objectContaining({ id: second.id, description: 'second' }),
        expect.objectContaining({ id: third.id, description: 'third' }),
      ],
    });
    for (const key of body.apiKeys) {
      expect(Object.keys(key).sort()).toEqual([
        'allowedCidrs',
        'createdAt',
        'description',
        'expiresAt',
        'id',
        'lastUsedAt',
        'leakReportedAt',
        'permissions',
        'rateLimit',
        'revokesAt',
        'tokenPreview',
        'updatedAt',
      ]);
      expect(key.createdAt).toMatch(ISO);
    }
    expect(res.body).not.toContain(second.key);
    expect(res.body).not.toContain(region.key);
  });

  it('shows only the region the key belongs to', async () => {
    const other = await newRegion(t, 'Other region');
    const body = (await getRegion(other.key)).json();
    expect(body.id).toBe(other.regionId);
    expect(body.apiKeys.map((k: { id: string }) => k.id)).toEqual([other.keyId]);
  });

  it('does not list revoked keys', async () => {
    const second = await createKey(t, region.key);
    expect((await del(region.key, second.id)).statusCode).toBe(204);
    const ids = (await getRegion(region.key)).json().apiKeys.map((k: { id: string }) => k.id);
    expect(ids).toEqual([region.keyId]);
  });
});

describe('authentication with X-API-Key', () => {
  const refused = async (headers: Record<string, string>, url = '/auth/regions/me') => {
    const res = await t.request({ method: 'GET', url, headers });
    const body = expectProblem(res, 401, 'unauthenticated');
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
    return body;
  };

  it('refuses a request with no key', async () => {
    await refused({});
  });

  it('refuses an over-long key', async () => {
    await refused({ 'x-api-key': `rk_${'a'.repeat(8000)}` });
  });

  it('refuses an empty key', async () => {
    await refused({ 'x-api-key': '' });
  });

  it('refuses a well-formed key that was never issued', async () => {
    await refused({ 'x-api-key': generateApiKey() });
  });

  it('refuses malformed keys and keys with a broken checksum without a database lookup', async () => {
    const lookup = jest.spyOn(t.app.get(RegionKeysRepository), 'findActiveKeyWithRegion');
    const last = region.key.at(-1) === 'A' ? 'B' : 'A';
    for (const key of ['nonsense', 'rk_short', `${region.key.slice(0, -1)}${last}`, `${region.key}x`, 'é'.repeat(40)]) {
      await refused({ 'x-api-key': key });
    }
    expect(lookup).not.toHaveBeenCalled();
    lookup.mockRestore();
  });

  it('does not accept the key in the query string or in Authorization', async () => {
    await refused({}, `/auth/regions/me?api_key=${region.key}`);
    await refused({}, `/auth/regions/me?x-api-key=${region.key}`);
    await refused({ authorization: `Bearer ${region.key}` });
    await refused({ authorization: `ApiKey ${region.key}` });
  });

  it('refuses a revoked key at once', async () => {
    const second = await createKey(t, region.key);
    expect((await getRegion(second.key)).statusCode).toBe(200);
    expect((await del(region.key, second.id)).statusCode).toBe(204);
    await refused({ 'x-api-key': second.key });
  });

  it('accepts the operator-chosen INITIAL_REGION_API_KEY', async () => {
    const res = await getRegion(TEST_ENV.INITIAL_REGION_API_KEY);
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe('Default region');
  });
});

describe('POST /auth/region/api-keys', () => {
  it('creates a key, shows the secret once, and does not let it be cached', async () => {
    const res = await post(region.key, { description: '  Timetable sync  ' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      key: expect.stringMatching(/^rk_[0-9A-Za-z]{49}$/),
      tokenPreview: expect.any(String),
      description: 'Timetable sync',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      lastUsedAt: null,
      leakReportedAt: null,
      revokesAt: null,
      expiresAt: null,
      permissions: ['region:read', 'keys:write'],
      allowedCidrs: null,
      rateLimit: null,
    });
    expect(body.tokenPreview).toBe(`${body.key.slice(0, 8)}\u2026${body.key.slice(-4)}`);
    // The new key works, and no later response or log line carries it.
    const region1 = await getRegion(body.key);
    expect(region1.statusCode).toBe(200);
    expect(region1.body).not.toContain(body.key);
    expect(t.logs.join('\n')).not.toContain(body.key);
    expect(t.logs.join('\n')).not.toContain(body.key.slice(8, -4));
  });

  it('stores only a SHA-256 hash of the key', async () => {
    const created = await createKey(t, region.key);
    const [row] = await t.app.get(DataSource).query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(created.key.slice(8, -4));
  });

  it.each([
    ['no body at all', undefined],
    ['an empty object', {}],
    ['a null description', { description: null }],
  ])('accepts %s as "no description"', async (_label, payload) => {
    const res = await post(
      region.key,
      payload === undefined ? undefined : JSON.stringify(payload),
      payload === undefined ? {} : { 'content-type': 'application/json' },
    );
    expect(res.statusCode).toBe(201);
    expect(res.json().description).toBeNull();
  });

  it('accepts a description of exactly 255 characters', async () => {
    const res = await post(region.key, { description: 'd'.repeat(255) });
    expect(res.statusCode).toBe(201);
  });

  it.each([
    ['an empty description', { description: '' }, 'description'],
    ['a description of spaces only', { description: '   ' }, 'description'],
    ['a description of 256 characters', { description: 'd'.repeat(256) }, 'description'],
    ['a numeric description', { description: 42 }, 'description'],
    ['a boolean description', { description: true }, 'description'],
    ['an object description', { description: { text: 'x' } }, 'description'],
    ['an array description', { description: ['x'] }, 'description'],
    ['a NUL character', { description: 'a\u0000b' }, 'description'],
    ['a lone surrogate', { description: 'a\ud800b' }, 'description'],
    ['an unknown field', { description: 'ok', regionId: 'x' }, 'regionId'],
  ])('refuses %s with 400 naming the field', async (_label, payload, field) => {
    const res = await post(region.key, payload);
    const body = expectProblem(res, 400);
    expect(body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]),
    );
  });

  it.each([
    ['malformed JSON', '{"description": "x"'],
    ['an empty JSON body', ''],
  ])('refuses %s with 400', async (_label, raw) => {
    const res = await post(region.key, raw, { 'content-type': 'application/json' });
    const body = expectProblem(res, 400, 'malformed-json');
    expect(body.errors).toEqual([{ field: 'body', message: expect.any(String) }]);
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"x"'],
    ['null', 'null'],
    ['a number', '7'],
  ])('refuses %s as the body with 400', async (_label, raw) => {
    const res = await post(region.key, raw, { 'content-type': 'application/json' });
    expect(expectProblem(res, 400).errors).toEqual([{ field: 'body', message: 'The body must be a JSON object' }]);
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const res = await post(region.key, JSON.stringify({ description: 'x'.repeat(70 * 1024) }), {
      'content-type': 'application/json',
    });
    expectProblem(res, 413);
  });

  it('refuses a body that is not JSON with 415', async () => {
    expectProblem(
      await post(region.key, 'description=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
    );
    expectProblem(await post(region.key, 'x', { 'content-type': 'text/plain' }), 415);
  });

  it('refuses a key past the region limit with 409, counting active keys only', async () => {
    // The suite runs with MAX_API_KEYS_PER_REGION=5; the region starts with one key.
    const extra = [];
    for (let i = 0; i < 4; i++) extra.push(await createKey(t, region.key));
    expectProblem(await post(region.key, {}), 409, 'api-key-limit');
    expect((await getRegion(region.key)).json().apiKeys).toHaveLength(5);
    expect((await del(region.key, extra[0].id)).statusCode).toBe(204);
    expect((await post(region.key, {})).statusCode).toBe(201);
  });

  it('needs a key', async () => {
    const res = await t.request({ method: 'POST', url: '/auth/region/api-keys', payload: {} });
    expectProblem(res, 401);
  });
});

describe('DELETE /auth/region/api-keys/:id', () => {
  it('revokes a key, keeps its row with revokedAt, and answers 204 with no body', async () => {
    const second = await createKey(t, region.key);
    const res = await del(region.key, second.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const [row] = await t.app.get(DataSource).query('SELECT revoked_at FROM api_keys WHERE id = $1', [second.id]);
    expect(row.revoked_at).toBeInstanceOf(Date);
  });

  it("refuses to delete the region's only key, which keeps working", async () => {
    const body = expectProblem(await del(region.key, region.keyId), 409, 'last-api-key');
    expect(body.detail).toMatch(/at least one/);
    expect((await getRegion(region.key)).statusCode).toBe(200);
  });

  it('lets a key delete itself while another remains', async () => {
    const second = await createKey(t, region.key);
    expect((await del(second.key, second.id)).statusCode).toBe(204);
    expect((await getRegion(second.key)).statusCode).toBe(401);
    expect((await getRegion(region.key)).statusCode).toBe(200);
  });

  it('answers 400 for an id that is not a UUID', async () => {
    for (const id of ['abc', '123', `${region.keyId}x`, `${region.keyId.slice(0, -1)}g`]) {
      const body = expectProblem(await del(region.key, id), 400);
      expect(body.errors).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
    }
    const nul = expectProblem(await del(region.key, '%00'), 400);
    expect(nul.errors).toEqual([{ field: 'id', message: 'id must not contain NUL characters' }]);
  });

  it('answers 415 to a body that is not JSON, and takes a stray JSON body as nothing', async () => {
    const second = await createKey(t, region.key);
    const text = await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${second.id}`,
      headers: { 'x-api-key': region.key, 'content-type': 'text/plain' },
      payload: 'please',
    });
    expectProblem(text, 415);
    const json = await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${second.id}`,
      headers: { 'x-api-key': region.key },
      payload: { reason: 'rotation' },
    });
    expect(json.statusCode).toBe(204);
  });

  it('answers a problem, never a 500, for an over-long or badly escaped id', async () => {
    const long = expectProblem(await del(region.key, 'a'.repeat(300)), 400);
    expect(long.errors).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
    // Past the router's limit: said without echoing the URL in the detail.
    const longer = await del(region.key, 'a'.repeat(3000));
    expect(expectProblem(longer, 400, 'bad-request').detail).toBe(
      'The URL is malformed: a path parameter in it is longer than 1000 characters.',
    );
    for (const id of ['%', '%E0%A4%A']) {
      const res = await del(region.key, id);
      expectProblem(res, 400, 'bad-request');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it("answers the same 404 for an unknown, a revoked and another region's key", async () => {
    await createKey(t, region.key);
    const revoked = await createKey(t, region.key);
    expect((await del(region.key, revoked.id)).statusCode).toBe(204);
    const other = await newRegion(t, 'Other');
    await createKey(t, other.key);

    const bodies = [];
    // Any well-formed UUID is an id that may exist, whatever its version and variant digits.
    const unknown = ['00000000-0000-4000-8000-000000000000', '12345678-1234-1234-1234-123456789ABC'];
    for (const id of [...unknown, revoked.id, other.keyId]) {
      const body = expectProblem(await del(region.key, id), 404, 'not-found');
      delete body.instance;
      bodies.push(body);
    }
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    // The other region's key is untouched.
    expect((await getRegion(other.key)).statusCode).toBe(200);
  });

  it('rotates a key as the seed describes: new key, old key goes quiet, old key deleted', async () => {
    const fresh = await createKey(t, region.key, 'rotated');
    expect((await getRegion(fresh.key)).statusCode).toBe(200);
    const keys = (await getRegion(fresh.key)).json().apiKeys;
    expect(keys.find((k: { id: string }) => k.id === fresh.id).lastUsedAt).toMatch(ISO);
    expect((await del(fresh.key, region.keyId)).statusCode).toBe(204);
    expect((await getRegion(region.key)).statusCode).toBe(401);
    expect((await getRegion(fresh.key)).json().apiKeys.map((k: { id: string }) => k.id)).toEqual([fresh.id]);
  });
});

describe('lastUsedAt', () => {
  const lastUsed = async (key: string, id: string) =>
    (await getRegion(key)).json().apiKeys.find((k: { id: string }) => k.id === id).lastUsedAt as string | null;

  it('is null until the key is used, then moves at most once a minute', async () => {
    const second = await createKey(t, region.key);
    expect(await lastUsed(region.key, second.id)).toBeNull();
    const first = await lastUsed(second.key, second.id);
    expect(first).toMatch(ISO);
    expect(await lastUsed(second.key, second.id)).toBe(first);

    // Two minutes later (moved back in the database), the next use writes again.
    await t.app
      .get(DataSource)
      .query(`UPDATE api_keys SET last_used_at = last_used_at - interval '2 minutes' WHERE id = $1`, [second.id]);
    const moved = await lastUsed(second.key, second.id);
    expect(new Date(moved!).getTime()).toBeGreaterThan(new Date(first!).getTime() - 1000);
    expect(moved).not.toBe(first);
  });
});

describe('the last-key rule under concurrency', () => {
  it('leaves exactly one working key when every key of a region is deleted at once', async () => {
    const n = 25;
    const local = await startTestApp({ MAX_API_KEYS_PER_REGION: '100' });
    try {
      const r = await newRegion(local);
      const keys = [{ id: r.keyId, key: r.key }];
      for (let i = 1; i < n; i++) keys.push(await createKey(local, r.key));
      const results = await Promise.all(
        keys.map(({ id, key }) =>
          local.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } }),
        ),
      );
      const statuses = results.map((res) => res.statusCode).sort();
      expect(statuses.filter((s) => s === 204)).toHaveLength(n - 1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(1);
      const survivor = keys[results.findIndex((res) => res.statusCode === 409)];
      const regionRes = await local.request({
        method: 'GET',
        url: '/auth/regions/me',
        headers: { 'x-api-key': survivor.key },
      });
      expect(regionRes.statusCode).toBe(200);
      expect(regionRes.json().apiKeys.map((k: { id: string }) => k.id)).toEqual([survivor.id]);
    } finally {
      await local.close();
    }
  });
});
