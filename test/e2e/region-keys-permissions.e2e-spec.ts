import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { SecurityCounters } from '../../src/common/metrics/security-counters';
import { generateApiKey, hashApiKey, previewApiKey } from '../../src/region-keys/api-key-codec';
import { KeyPermissionsAndAllowlists1764100000000 } from '../../src/region-keys/migrations/1764100000000-key-permissions-and-allowlists';
import { migrateFromOldSchema } from '../support/migrations';
import { expectProblem } from '../support/problems';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';

type Reply = Awaited<ReturnType<TestApp['request']>>;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const post = (key: string, url: string, payload: object = {}, extra: { remoteAddress?: string } = {}) =>
  t.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload, ...extra });
const create = (key: string, payload: object = {}, remoteAddress?: string) =>
  post(key, '/auth/region/api-keys', payload, { remoteAddress });
const me = (key: string, remoteAddress?: string, headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key, ...headers }, remoteAddress });

/** A key of `region` holding exactly `permissions` (made by the region's first key, which holds both). */
async function keyWith(region: RegionFixture, payload: object): Promise<{ id: string; key: string }> {
  const res = await create(region.key, payload);
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

const ROUTES: [string, 'region:read' | 'keys:write', (key: string, target: string) => Promise<Reply>][] = [
  ['GET /auth/regions/me', 'region:read', (key) => me(key)],
  [
    'GET /auth/region/events',
    'region:read',
    (key) => t.request({ method: 'GET', url: '/auth/region/events', headers: { 'x-api-key': key } }),
  ],
  ['POST /auth/region/api-keys', 'keys:write', (key) => create(key, {})],
  [
    'POST /auth/region/api-keys/:id/roll',
    'keys:write',
    // Asks for what a keys:write-only caller holds: by default a roll keeps the target's two permissions.
    (key, target) => post(key, `/auth/region/api-keys/${target}/roll`, { permissions: ['keys:write'] }),
  ],
  [
    'DELETE /auth/region/api-keys/:id',
    'keys:write',
    (key, target) =>
      t.request({ method: 'DELETE', url: `/auth/region/api-keys/${target}`, headers: { 'x-api-key': key } }),
  ],
];

describe('permissions', () => {
  it('gives a new key the permissions of the key that creates it when none are asked for, and lists them', async () => {
    const region = await newRegion(t);
    const reader = await keyWith(region, { permissions: ['region:read'] });
    const res = await create(region.key, { description: 'default' });
    expect(res.json()).toMatchObject({ permissions: ['region:read', 'keys:write'], allowedCidrs: null });
    const listed = (await me(reader.key)).json().apiKeys;
    expect(listed.map((k: { permissions: string[] }) => k.permissions)).toEqual([
      ['region:read', 'keys:write'],
      ['region:read'],
      ['region:read', 'keys:write'],
    ]);
  });

  describe.each(ROUTES)('%s needs %s', (_route, needed, send) => {
    const other = needed === 'region:read' ? 'keys:write' : 'region:read';

    it(`refuses a key holding only ${other} with 403 insufficient-permission, and changes nothing`, async () => {
      const region = await newRegion(t);
      const lacking = await keyWith(region, { permissions: [other] });
      const target = await keyWith(region, {});
      // The refused key did authenticate, so its lastUsedAt may move; nothing else may.
      const keys = async () =>
        (await me(region.key))
          .json()
          .apiKeys.map(({ id, revokesAt, permissions }: Record<string, unknown>) => ({ id, revokesAt, permissions }));
      const before = await keys();
      const body = expectProblem(await send(lacking.key, target.id), 403, 'insufficient-permission');
      expect(body.detail).toContain(needed);
      expect(await keys()).toEqual(before);
    });

    it(`lets a key holding only ${needed} through`, async () => {
      const region = await newRegion(t);
      const holding = await keyWith(region, { permissions: [needed] });
      const target = await keyWith(region, {});
      const res = await send(holding.key, target.id);
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: expect.any(Number) });
      expect(res.statusCode).toBeLessThan(300);
    });
  });

  it('is checked after authentication: a revoked key gets 401, not 403', async () => {
    const region = await newRegion(t);
    const writer = await keyWith(region, { permissions: ['keys:write'] });
    await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${writer.id}`,
      headers: { 'x-api-key': region.key },
    });
    expectProblem(await me(writer.key), 401, 'unauthenticated');
  });

  it.each([
    ['create', (key: string) => create(key, { permissions: ['region:read', 'keys:write'] })],
    [
      'roll',
      (key: string, id: string) =>
        post(key, `/auth/region/api-keys/${id}/roll`, { permissions: ['keys:write', 'region:read'] }),
    ],
  ])(
    'refuses to %s a key with more permissions than the caller holds (403), and issues nothing',
    async (_label, send) => {
      const region = await newRegion(t);
      const writer = await keyWith(region, { permissions: ['keys:write'] });
      const body = expectProblem(await send(writer.key, writer.id), 403, 'insufficient-permission');
      expect(body.detail).toContain('region:read');
      const [{ count }] = await t.app
        .get(DataSource)
        .query('SELECT count(*)::int AS count FROM api_keys WHERE region_id = $1', [region.regionId]);
      expect(count).toBe(2);
    },
  );

  it('lets a key grant fewer permissions than it holds, on create and on roll', async () => {
    const region = await newRegion(t);
    const created = await keyWith(region, { permissions: ['keys:write'] });
    const rolled = await post(region.key, `/auth/region/api-keys/${created.id}/roll`, { permissions: ['region:read'] });
    expect(rolled.statusCode).toBe(201);
    expect(rolled.json().permissions).toEqual(['region:read']);
  });

  it.each([
    ['an empty list', []],
    ['an unknown permission', ['region:write']],
    ['a list that is not one', 'region:read'],
    ['null', null],
  ])('refuses %s of permissions with 400 naming the field', async (_label, permissions) => {
    const region = await newRegion(t);
    const body = expectProblem(await create(region.key, { permissions }), 400, 'validation');
    expect(body.errors.map((e: { field: string }) => e.field)).toContain('permissions');
  });

  it('names the real problem of permissions sent as a string: not an array (not its size)', async () => {
    const region = await newRegion(t);
    const body = expectProblem(await create(region.key, { permissions: 'keys:write' }), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'permissions', message: 'permissions must be an array' }]);
  });

  it("keeps the old key's permissions on a roll that asks for none: a read-only key stays read-only", async () => {
    const region = await newRegion(t);
    const reader = await keyWith(region, { permissions: ['region:read'] });
    const rolled = await post(region.key, `/auth/region/api-keys/${reader.id}/roll`, {});
    expect(rolled.statusCode).toBe(201);
    expect(rolled.json().permissions).toEqual(['region:read']);
    expectProblem(await create(rolled.json().key, {}), 403, 'insufficient-permission');
  });

  it('refuses (403) a roll that asks for no permissions when the old key holds some the caller lacks, and issues nothing', async () => {
    const region = await newRegion(t);
    const writer = await keyWith(region, { permissions: ['keys:write'] });
    const body = expectProblem(
      await post(writer.key, `/auth/region/api-keys/${region.keyId}/roll`, {}),
      403,
      'insufficient-permission',
    );
    expect(body.detail).toContain('region:read');
    expect((await me(region.key)).json().apiKeys).toHaveLength(2);
  });
});

describe('the last-key rule counts permanent keys holding both region:read and keys:write', () => {
  it('refuses to delete the only managing key while a read-only key remains (409), and allows it once another manager exists', async () => {
    const region = await newRegion(t);
    await keyWith(region, { permissions: ['region:read'] });
    const del = (id: string) =>
      t.request({ method: 'DELETE', url: `/auth/region/api-keys/${id}`, headers: { 'x-api-key': region.key } });
    expectProblem(await del(region.keyId), 409, 'last-api-key');
    await keyWith(region, { permissions: ['region:read', 'keys:write'] });
    expect((await del(region.keyId)).statusCode).toBe(204);
  });

  it('keeps a region able to read itself: a keys:write key and a region:read key left apart do not count', async () => {
    const region = await newRegion(t);
    const writer = await keyWith(region, { permissions: ['keys:write'] });
    await keyWith(region, { permissions: ['region:read'] });
    const del = t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${region.keyId}`,
      headers: { 'x-api-key': writer.key },
    });
    expectProblem(await del, 409, 'last-api-key');
    const url = `/auth/region/api-keys/${region.keyId}`;
    expectProblem(await post(region.key, `${url}/roll`, { permissions: ['keys:write'] }), 409, 'last-api-key');
    const narrowed = await t.request({
      method: 'PATCH',
      url,
      headers: { 'x-api-key': region.key },
      payload: { permissions: ['keys:write'] },
    });
    expectProblem(narrowed, 409, 'last-api-key');
    expect(
      (await me(region.key)).json().apiKeys.find((k: { id: string }) => k.id === region.keyId).permissions,
    ).toEqual(['region:read', 'keys:write']);
  });

  it('lets a read-only key be deleted whatever else the region holds', async () => {
    const region = await newRegion(t);
    const reader = await keyWith(region, { permissions: ['region:read'] });
    const res = await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${reader.id}`,
      headers: { 'x-api-key': region.key },
    });
    expect(res.statusCode).toBe(204);
  });

  it.each([0, 60])(
    'refuses to roll the only managing key into a read-only one (revoke after %is) with 409',
    async (revokeOldAfterSeconds) => {
      const region = await newRegion(t);
      // Rolled by a key that expires (no manager itself): a key rolling itself keeps working a minute.
      const expiresAt = new Date(Date.now() + 3600_000).toISOString();
      const expiring = await keyWith(region, { expiresAt });
      const res = await post(expiring.key, `/auth/region/api-keys/${region.keyId}/roll`, {
        permissions: ['region:read'],
        revokeOldAfterSeconds,
      });
      expectProblem(res, 409, 'last-api-key');
      expect((await me(region.key)).json().apiKeys).toHaveLength(2);
    },
  );
});

describe('the last-key rule counts only keys some address may use', () => {
  it("refuses the region's only key rolling itself into an empty allowlist (400), and the key keeps working", async () => {
    const region = await newRegion(t);
    const res = await post(region.key, `/auth/region/api-keys/${region.keyId}/roll`, {
      allowedCidrs: [],
      revokeOldAfterSeconds: 0,
    });
    const body = expectProblem(res, 400, 'validation');
    expect(body.errors).toEqual([{ field: 'allowedCidrs', message: expect.stringContaining('empty') }]);
    expect((await me(region.key)).json().apiKeys.map((k: { id: string }) => k.id)).toEqual([region.keyId]);
  });

  it('refuses an empty allowlist on create too (400), and issues nothing', async () => {
    const region = await newRegion(t);
    expectProblem(await create(region.key, { allowedCidrs: [] }), 400, 'validation');
    expect((await me(region.key)).json().apiKeys).toHaveLength(1);
  });

  it('does not count a managing key stored with an empty allowlist (from before it was refused)', async () => {
    const region = await newRegion(t);
    const stored = await keyWith(region, { allowedCidrs: ['127.0.0.1/32'] });
    await t.app.get(DataSource).query(`UPDATE api_keys SET allowed_cidrs = '{}' WHERE id = $1`, [stored.id]);
    const del = () =>
      t.request({
        method: 'DELETE',
        url: `/auth/region/api-keys/${region.keyId}`,
        headers: { 'x-api-key': region.key },
      });
    expectProblem(await del(), 409, 'last-api-key');
    const rolled = await post(region.key, `/auth/region/api-keys/${stored.id}/roll`, {
      allowedCidrs: null,
      revokeOldAfterSeconds: 0,
    });
    expect(rolled.statusCode).toBe(201);
    expect((await del()).statusCode).toBe(204);
  });
});

describe('address allowlists', () => {
  it.each([
    ['an IPv4 network', ['192.0.2.0/24'], '192.0.2.77', '192.0.3.1'],
    ['a bare IPv4 address', ['192.0.2.7'], '192.0.2.7', '192.0.2.8'],
    ['an IPv6 network', ['2001:db8:1::/48'], '2001:db8:1:ffff::9', '2001:db8:2::1'],
    ['an IPv4 network, for an IPv4-mapped IPv6 client', ['192.0.2.0/24'], '::ffff:192.0.2.9', '::ffff:192.0.3.9'],
    ['IPv4 and IPv6 networks together', ['198.51.100.0/24', '2001:db8::/32'], '2001:db8::1', '203.0.113.1'],
  ])(
    'with %s, accepts a listed client and refuses another with 403 address-not-allowed',
    async (_label, allowedCidrs, inside, outside) => {
      const region = await newRegion(t);
      const limited = await keyWith(region, { allowedCidrs });
      expect((await me(limited.key, inside)).statusCode).toBe(200);
      const refused = expectProblem(await me(limited.key, outside), 403, 'address-not-allowed');
      expect(refused.detail).not.toContain(allowedCidrs[0]);
    },
  );

  it('counts a refusal as an address_not_allowed authentication, and does not move lastUsedAt', async () => {
    const region = await newRegion(t);
    const limited = await keyWith(region, { allowedCidrs: ['192.0.2.0/24'] });
    const counted = jest.spyOn(t.app.get(SecurityCounters), 'apiKeyAuthenticated');
    try {
      expectProblem(await me(limited.key, '203.0.113.5'), 403, 'address-not-allowed');
      expect(counted.mock.calls).toEqual([['address_not_allowed']]);
    } finally {
      counted.mockRestore();
    }
    const [row] = await t.app.get(DataSource).query('SELECT last_used_at FROM api_keys WHERE id = $1', [limited.id]);
    expect(row.last_used_at).toBeNull();
  });

  it("stores CIDRs in canonical form, and a roll keeps the old key's allowlist unless given another (null clears it)", async () => {
    const region = await newRegion(t);
    const limited = await keyWith(region, { allowedCidrs: ['2001:DB8:0:0::/64', '10.0.0.0/8', '192.0.2.1'] });
    expect((await me(region.key)).json().apiKeys.find((k: { id: string }) => k.id === limited.id).allowedCidrs).toEqual(
      ['2001:db8::/64', '10.0.0.0/8', '192.0.2.1/32'],
    );
    const kept = await post(region.key, `/auth/region/api-keys/${limited.id}/roll`, {});
    expect(kept.json().allowedCidrs).toEqual(['2001:db8::/64', '10.0.0.0/8', '192.0.2.1/32']);
    const cleared = await post(region.key, `/auth/region/api-keys/${kept.json().id}/roll`, { allowedCidrs: null });
    expect(cleared.json().allowedCidrs).toBeNull();
  });

  it('stores each network once, however it was written', async () => {
    const region = await newRegion(t);
    const sent = ['127.0.0.1/32', '127.0.0.1/32', '127.0.0.1', '::ffff:127.0.0.1', '2001:DB8::/32', '2001:db8::/32'];
    const created = await keyWith(region, { allowedCidrs: sent });
    const stored = ['127.0.0.1/32', '2001:db8::/32'];
    expect((created as unknown as { allowedCidrs: string[] }).allowedCidrs).toEqual(stored);
    const rolled = await post(region.key, `/auth/region/api-keys/${created.id}/roll`, { allowedCidrs: sent });
    expect(rolled.json().allowedCidrs).toEqual(stored);
    const [row] = await t.app
      .get(DataSource)
      .query('SELECT allowed_cidrs AS "allowedCidrs" FROM api_keys WHERE id = $1', [rolled.json().id]);
    expect(row.allowedCidrs).toEqual(stored);
  });

  it.each([
    ['not an address', 'example.com'],
    ['an IPv4 prefix over 32', '192.0.2.0/33'],
    ['an IPv6 prefix over 128', '2001:db8::/129'],
    ['a negative prefix', '192.0.2.0/-1'],
    ['an empty prefix', '192.0.2.0/'],
    ['a zone id', 'fe80::1%eth0'],
    ['host bits past the prefix', '192.0.2.1/24'],
    ['a short IPv4 form', '10.1'],
    ['not a string', 42],
    ['an IPv6 network holding every IPv4-mapped address', '::/0'],
    ['the unspecified IPv4 address', '0.0.0.0/32'],
    ['a multicast network', '224.0.0.0/4'],
  ])('refuses %s with 400 naming allowedCidrs', async (_label, cidr) => {
    const region = await newRegion(t);
    const body = expectProblem(await create(region.key, { allowedCidrs: ['192.0.2.0/24', cidr] }), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'allowedCidrs', message: expect.stringContaining('allowedCidrs[1]') }]);
  });

  it("refuses to confine the region's last managing key to addresses no client connects from, and the key keeps working", async () => {
    const region = await newRegion(t);
    for (const cidr of ['::', '0.0.0.0/32', '255.255.255.255']) {
      const confined = await t.request({
        method: 'PATCH',
        url: `/auth/region/api-keys/${region.keyId}`,
        headers: { 'x-api-key': region.key },
        payload: { allowedCidrs: [cidr] },
      });
      const body = expectProblem(confined, 400, 'validation');
      expect(body.errors).toEqual([
        { field: 'allowedCidrs', message: expect.stringContaining('admits no address a client connects from') },
      ]);
    }
    const mine = (await me(region.key)).json().apiKeys.find((k: { id: string }) => k.id === region.keyId);
    expect(mine.allowedCidrs).toBeNull();
  });
});

describe('address allowlists behind a proxy (TRUST_PROXY=1)', () => {
  let proxied: TestApp;
  beforeAll(async () => {
    proxied = await startTestApp({ TRUST_PROXY: '1' });
  });
  afterAll(async () => proxied?.close());

  it("goes by the address the proxy forwards, not by the proxy's, nor by entries the client forged", async () => {
    const region = await newRegion(proxied);
    const made = await proxied.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': region.key },
      payload: { allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
    });
    const { key } = made.json();
    const via = (forwardedFor: string) =>
      proxied.request({
        method: 'GET',
        url: '/auth/regions/me',
        headers: { 'x-api-key': key, 'x-forwarded-for': forwardedFor },
        remoteAddress: '10.0.0.2',
      });
    expect((await via('203.0.113.40')).statusCode).toBe(200);
    expect((await via('2001:db8::40')).statusCode).toBe(200);
    // The proxy appends the client it saw; what the client wrote before that is not trusted.
    expect((await via('203.0.113.40, 198.51.100.1')).statusCode).toBe(403);
    expectProblem(await via('198.51.100.1'), 403, 'address-not-allowed');
  });
});

describe('events record what was granted', () => {
  it('on region.created, api_key.created and api_key.rolled; not on api_key.revoked', async () => {
    const region = await newRegion(t);
    const limited = await keyWith(region, { permissions: ['region:read'], allowedCidrs: ['192.0.2.0/24'] });
    const rolled = (
      await post(region.key, `/auth/region/api-keys/${limited.id}/roll`, {
        permissions: ['keys:write'],
        revokeOldAfterSeconds: 60,
      })
    ).json();
    await t.request({
      method: 'DELETE',
      url: `/auth/region/api-keys/${limited.id}`,
      headers: { 'x-api-key': region.key },
    });
    const { data } = (
      await t.request({ method: 'GET', url: '/auth/region/events', headers: { 'x-api-key': region.key } })
    ).json();
    const summary = data.map(
      (e: { type: string; apiKey: { id: string; permissions?: string[]; allowedCidrs?: string[] | null } }) => ({
        type: e.type,
        id: e.apiKey.id,
        permissions: e.apiKey.permissions,
        allowedCidrs: e.apiKey.allowedCidrs,
      }),
    );
    expect(summary).toEqual([
      { type: 'api_key.revoked', id: limited.id, permissions: undefined, allowedCidrs: undefined },
      { type: 'api_key.created', id: rolled.id, permissions: ['keys:write'], allowedCidrs: ['192.0.2.0/24'] },
      { type: 'api_key.rolled', id: limited.id, permissions: ['region:read'], allowedCidrs: ['192.0.2.0/24'] },
      { type: 'api_key.created', id: limited.id, permissions: ['region:read'], allowedCidrs: ['192.0.2.0/24'] },
      { type: 'region.created', id: region.keyId, permissions: ['region:read', 'keys:write'], allowedCidrs: null },
    ]);
  });
});

describe('migration KeyPermissionsAndAllowlists1764100000000', () => {
  it('gives keys that existed before it both permissions and no allowlist, and they keep working', async () => {
    const region = await newRegion(t);
    const dataSource = t.app.get(DataSource);
    const migration = new KeyPermissionsAndAllowlists1764100000000();
    let oldKey: { id: string; key: string } | undefined;
    // The rollback refuses while a working key is limited (earlier tests made some): revoked first, as it asks.
    await dataSource.query(
      `UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL
         AND (NOT permissions @> ARRAY['region:read', 'keys:write']::text[] OR allowed_cidrs IS NOT NULL)`,
    );
    // A key as the code before the migration inserted one.
    await migrateFromOldSchema(dataSource, migration, async (q) => {
      const columns: { column_name: string }[] = await q.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name IN ('permissions', 'allowed_cidrs')`,
      );
      expect(columns).toEqual([]);
      const key = generateApiKey();
      const [{ id }] = await q.query(
        `INSERT INTO api_keys (id, region_id, token_hash, token_preview, description) VALUES (gen_random_uuid(), $1, $2, $3, 'old') RETURNING id`,
        [region.regionId, hashApiKey(key), previewApiKey(key)],
      );
      oldKey = { id, key };
    });
    if (!oldKey) throw new Error('the old key was not inserted');
    const [row] = await dataSource.query('SELECT permissions, allowed_cidrs FROM api_keys WHERE id = $1', [oldKey.id]);
    expect(row).toEqual({ permissions: ['region:read', 'keys:write'], allowed_cidrs: null });
    // Both permissions, from any address: it reads, and it manages keys.
    expect((await me(oldKey.key, '198.51.100.200')).statusCode).toBe(200);
    expect((await create(oldKey.key, { description: 'by the old key' })).statusCode).toBe(201);
    // The backfill default is gone: an insert that names no permissions fails instead of granting all.
    await expect(
      dataSource.query(
        `INSERT INTO api_keys (id, region_id, token_hash, token_preview) VALUES (gen_random_uuid(), $1, $2, 'x')`,
        [region.regionId, 'f'.repeat(64)],
      ),
    ).rejects.toThrow(/permissions/);
  });
});
