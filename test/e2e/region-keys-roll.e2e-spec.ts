import { randomUUID } from 'node:crypto';

import { DataSource } from 'typeorm';

import { expectProblem } from '../support/problems';
import { createKey, newRegion, RegionFixture, startTestApp, stillClock, TestApp } from '../support/test-app';

/** Rolling a key (POST /auth/region/api-keys/{id}/roll) and the time the old key stops. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

let t: TestApp;
let region: RegionFixture;

beforeAll(async () => {
  t = await startTestApp({ MAX_API_KEYS_PER_REGION: '5' });
});
afterAll(async () => t?.close());
// Time stands still unless a test moves it, so revokesAt and expiresAt can be checked exactly.
const { now, later } = stillClock(() => t);
beforeEach(async () => {
  region = await newRegion(t);
});

const roll = (key: string, id: string, payload?: unknown) =>
  t.request({
    method: 'POST',
    url: `/auth/region/api-keys/${id}/roll`,
    headers: { 'x-api-key': key },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
const getRegion = (key: string) => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
const del = (key: string, id: string) =>
  t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': key } });
const listedKeys = async (key: string) =>
  (await getRegion(key))
    .json()
    .apiKeys.map((k: { id: string; revokesAt: string | null }) => ({ id: k.id, revokesAt: k.revokesAt }));

describe('POST /auth/region/api-keys/:id/roll', () => {
  it('creates a new key, shown once, and keeps the old one working for a day by default', async () => {
    const res = await roll(region.key, region.keyId);
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    const revokesAt = new Date(now().getTime() + DAY_MS).toISOString();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      key: expect.stringMatching(/^rk_[0-9A-Za-z]{49}$/),
      tokenPreview: `${body.key.slice(0, 8)}\u2026${body.key.slice(-4)}`,
      description: 'first key',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      lastUsedAt: null,
      leakReportedAt: null,
      revokesAt: null,
      expiresAt: null,
      permissions: ['region:read', 'keys:write'],
      allowedCidrs: null,
      rateLimit: null,
      replaces: { id: region.keyId, revokesAt },
    });
    // Both keys work until then, and the old one shows when it stops.
    expect((await getRegion(region.key)).statusCode).toBe(200);
    expect(await listedKeys(body.key)).toEqual([
      { id: region.keyId, revokesAt },
      { id: body.id, revokesAt: null },
    ]);
  });

  it('takes a new description, or none', async () => {
    const described = (
      await roll(region.key, region.keyId, { description: '  Nightly export  ', revokeOldAfterSeconds: 60 })
    ).json();
    expect(described.description).toBe('Nightly export');
    const none = (await roll(described.key, described.id, { description: null })).json();
    expect(none.description).toBeNull();
  });

  it('with revokeOldAfterSeconds 0, revokes the old key at once, as a DELETE would', async () => {
    const other = await createKey(t, region.key);
    const res = await roll(other.key, region.keyId, { revokeOldAfterSeconds: 0 });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.replaces).toEqual({ id: region.keyId, revokesAt: now().toISOString() });
    expectProblem(await getRegion(region.key), 401, 'unauthenticated');
    expect(await listedKeys(body.key)).toEqual([
      { id: other.id, revokesAt: null },
      { id: body.id, revokesAt: null },
    ]);
    const [row] = await t.app.get(DataSource).query('SELECT revoked_at FROM api_keys WHERE id = $1', [region.keyId]);
    expect(row.revoked_at).toEqual(now());
    expectProblem(await del(body.key, region.keyId), 404, 'not-found');
    expectProblem(await roll(body.key, region.keyId), 404, 'not-found');
  });

  it('refuses a key rolling itself with less than a minute to retry (400), and changes nothing', async () => {
    // Its answer holds the only copy of the new secret, and a retry authenticates with the old key.
    for (const revokeOldAfterSeconds of [0, 59]) {
      const body = expectProblem(await roll(region.key, region.keyId, { revokeOldAfterSeconds }), 400, 'validation');
      expect(body.errors).toEqual([
        { field: 'revokeOldAfterSeconds', message: expect.stringContaining('when a key rolls itself') },
      ]);
    }
    expect(await listedKeys(region.key)).toEqual([{ id: region.keyId, revokesAt: null }]);
  });

  it('answers a retried self-roll with its first answer while the old key works; the new key then stops it', async () => {
    const idempotencyKey = randomUUID();
    const rollItself = () =>
      t.request({
        method: 'POST',
        url: `/auth/region/api-keys/${region.keyId}/roll`,
        headers: { 'x-api-key': region.key, 'idempotency-key': idempotencyKey },
        payload: { revokeOldAfterSeconds: 60 },
      });
    const first = await rollItself();
    expect(first.statusCode).toBe(201);
    later(59_000);
    const retried = await rollItself();
    expect([retried.statusCode, retried.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(retried.json()).toEqual(first.json());
    expect((await del(first.json().key, region.keyId)).statusCode).toBe(204);
    expectProblem(await getRegion(region.key), 401, 'unauthenticated');
  });

  it('stops the old key by itself once its revokesAt has passed: refused and no longer listed', async () => {
    const rolled = (await roll(region.key, region.keyId, { revokeOldAfterSeconds: 60 })).json();
    later(59_999);
    expect((await getRegion(region.key)).statusCode).toBe(200);
    later(1);
    const refused = expectProblem(await getRegion(region.key), 401, 'unauthenticated');
    expect(refused.detail).toMatch(/active/);
    expect(await listedKeys(rolled.key)).toEqual([{ id: rolled.id, revokesAt: null }]);
    // It is gone for every operation: the same 404 as an unknown key.
    expectProblem(await del(rolled.key, region.keyId), 404, 'not-found');
    expectProblem(await roll(rolled.key, region.keyId), 404, 'not-found');
  });

  it('refuses to roll a key that was already rolled (409), and changes nothing', async () => {
    const first = (await roll(region.key, region.keyId, { revokeOldAfterSeconds: 3600 })).json();
    const before = await listedKeys(first.key);
    expectProblem(await roll(first.key, region.keyId), 409, 'api-key-already-rolled');
    expect(await listedKeys(first.key)).toEqual(before);
    // Its replacement can be rolled in turn.
    expect((await roll(first.key, first.id, { revokeOldAfterSeconds: 60 })).statusCode).toBe(201);
  });

  it('counts the new key against the region limit', async () => {
    // The suite runs with MAX_API_KEYS_PER_REGION=5; the region starts with one key.
    const other = await createKey(t, region.key);
    for (let i = 0; i < 3; i++) await createKey(t, region.key);
    expectProblem(await roll(region.key, region.keyId, { revokeOldAfterSeconds: 60 }), 409, 'api-key-limit');
    expect((await listedKeys(region.key)).every((k: { revokesAt: string | null }) => k.revokesAt === null)).toBe(true);
    // An old key that stops at once leaves room for its replacement.
    expect((await roll(other.key, region.keyId, { revokeOldAfterSeconds: 0 })).statusCode).toBe(201);
  });

  it("answers like DELETE for ids: 400 for a non-UUID, 404 for unknown, revoked and other regions' keys", async () => {
    expect(expectProblem(await roll(region.key, 'abc'), 400).errors).toEqual([
      { field: 'id', message: 'id must be a UUID' },
    ]);
    const other = await newRegion(t, 'Other region');
    const revoked = await createKey(t, region.key);
    expect((await del(region.key, revoked.id)).statusCode).toBe(204);
    for (const id of ['00000000-0000-4000-8000-000000000000', revoked.id, other.keyId]) {
      expectProblem(await roll(region.key, id), 404, 'not-found');
    }
    expect((await getRegion(other.key)).json().apiKeys).toEqual([
      expect.objectContaining({ id: other.keyId, revokesAt: null }),
    ]);
  });

  it.each([
    ['revokeOldAfterSeconds', { revokeOldAfterSeconds: -1 }],
    ['revokeOldAfterSeconds', { revokeOldAfterSeconds: 604_801 }],
    ['revokeOldAfterSeconds', { revokeOldAfterSeconds: 1.5 }],
    ['revokeOldAfterSeconds', { revokeOldAfterSeconds: '60' }],
    ['revokeOldAfterSeconds', { revokeOldAfterSeconds: null }],
    ['description', { description: '' }],
    ['description', { description: 'x'.repeat(256) }],
    ['replaces', { replaces: 'x' }],
  ])('refuses a bad %s (case %#) with a 400 naming it, and changes nothing', async (field, payload) => {
    const body = expectProblem(await roll(region.key, region.keyId, payload), 400, 'validation');
    expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await listedKeys(region.key)).toEqual([{ id: region.keyId, revokesAt: null }]);
  });

  it('accepts the longest grace period, a week', async () => {
    const res = await roll(region.key, region.keyId, { revokeOldAfterSeconds: 604_800 });
    expect(res.json().replaces.revokesAt).toBe(new Date(now().getTime() + 7 * DAY_MS).toISOString());
  });

  it('needs a key', async () => {
    expectProblem(await t.request({ method: 'POST', url: `/auth/region/api-keys/${region.keyId}/roll` }), 401);
  });
});

describe('the last-key rule with scheduled revocations', () => {
  it('refuses a DELETE that would leave only keys about to stop, and allows deleting those', async () => {
    const rolled = (await roll(region.key, region.keyId, { revokeOldAfterSeconds: 3600 })).json();
    const body = expectProblem(await del(region.key, rolled.id), 409, 'last-api-key');
    expect(body.detail).toMatch(/not scheduled for revocation/);
    expect(await listedKeys(rolled.key)).toHaveLength(2);
    // The key about to stop may go early: the permanent one remains.
    expect((await del(rolled.key, region.keyId)).statusCode).toBe(204);
    expect(await listedKeys(rolled.key)).toEqual([{ id: rolled.id, revokesAt: null }]);
  });

  it('keeps the region usable after every scheduled revocation has passed', async () => {
    const second = await createKey(t, region.key);
    const a = (await roll(region.key, region.keyId, { revokeOldAfterSeconds: 60 })).json();
    const b = (await roll(second.key, second.id, { revokeOldAfterSeconds: 120 })).json();
    // Deleting a's replacement is fine (b's replacement is permanent); the last permanent key is not.
    expect((await del(region.key, a.id)).statusCode).toBe(204);
    expectProblem(await del(region.key, b.id), 409, 'last-api-key');
    later(7 * DAY_MS);
    expect(await listedKeys(b.key)).toEqual([{ id: b.id, revokesAt: null }]);
  });
});
