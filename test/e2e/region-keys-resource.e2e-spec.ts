import { DataSource } from 'typeorm';

import { PrometheusMetrics } from '../../src/common/metrics/prometheus-metrics';
import { expectProblem } from '../support/problems';
import { freePort } from '../support/processes';
import { newRegion, RegionFixture, startTestApp, stillClock, TestApp } from '../support/test-app';

/**
 * A key as a whole resource: GET and PATCH /auth/region/api-keys/{id} with its ETag, and
 * expiresAt on create, roll and PATCH (the clock is held still, and moved by the tests).
 */
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const GAUGE = 'region_keys_api_api_keys_expiring';

type Reply = Awaited<ReturnType<TestApp['request']>>;

let t: TestApp;
let region: RegionFixture;

beforeAll(async () => {
  t = await startTestApp({ METRICS_PORT: String(await freePort()), METRICS_HOST: '127.0.0.1' });
});
afterAll(async () => t?.close());
// Time stands still unless a test moves it, so revokesAt and expiresAt can be checked exactly.
const { now, later } = stillClock(() => t);
beforeEach(async () => {
  region = await newRegion(t);
});

const ahead = (ms: number) => new Date(now().getTime() + ms).toISOString();
const keyUrl = (id: string) => `/auth/region/api-keys/${id}`;

const get = (key: string, id: string, headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: keyUrl(id), headers: { 'x-api-key': key, ...headers } });
const patch = (key: string, id: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.request({
    method: 'PATCH',
    url: keyUrl(id),
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });
const create = (key: string, payload: object = {}) =>
  t.request({ method: 'POST', url: '/auth/region/api-keys', headers: { 'x-api-key': key }, payload });
const roll = (key: string, id: string, payload: object = {}) =>
  t.request({ method: 'POST', url: `${keyUrl(id)}/roll`, headers: { 'x-api-key': key }, payload });
const del = (key: string, id: string, headers: Record<string, string> = {}) =>
  t.request({ method: 'DELETE', url: keyUrl(id), headers: { 'x-api-key': key, ...headers } });
const me = (key: string) => t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
const events = async (key: string) =>
  (await t.request({ method: 'GET', url: '/auth/region/events', headers: { 'x-api-key': key } })).json().data;

async function keyWith(
  payload: object,
  by = region.key,
): Promise<{ id: string; key: string; expiresAt: string | null }> {
  const res = await create(by, payload);
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

const managers = async (regionId: string): Promise<number> => {
  const [{ count }] = await t.app.get(DataSource).query(
    `SELECT count(*)::int AS count FROM api_keys
      WHERE region_id = $1 AND revoked_at IS NULL AND revokes_at IS NULL AND expires_at IS NULL
        AND permissions @> ARRAY['region:read', 'keys:write']`,
    [regionId],
  );
  return count as number;
};

describe('GET /auth/region/api-keys/:id', () => {
  it('answers the key as GET /auth/regions/me lists it, with a strong ETag, and 304 to that ETag', async () => {
    const other = await keyWith({ description: 'reader', permissions: ['region:read'] });
    const res = await get(region.key, other.id);
    expect(res.statusCode).toBe(200);
    const listed = (await me(region.key)).json().apiKeys.find((k: { id: string }) => k.id === other.id);
    expect(res.json()).toEqual(listed);
    expect(res.json()).toMatchObject({ description: 'reader', permissions: ['region:read'], expiresAt: null });
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);

    const notModified = await get(region.key, other.id, { 'if-none-match': `"other", ${etag}` });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers.etag).toBe(etag);
    expect((await get(region.key, other.id, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    // A read-only key reads keys; the Location of a new key answers GET.
    expect((await get(other.key, region.keyId)).statusCode).toBe(200);
  });

  it('keeps its ETag while only lastUsedAt moves, so an If-Match from before still holds', async () => {
    const first = await get(region.key, region.keyId);
    later(5 * MINUTE_MS);
    const second = await get(region.key, region.keyId);
    expect(second.json().lastUsedAt).not.toBe(first.json().lastUsedAt);
    expect(second.headers.etag).toBe(first.headers.etag);
    const res = await patch(
      region.key,
      region.keyId,
      { description: 'renamed' },
      { 'if-match': first.headers.etag as string },
    );
    expect(res.statusCode).toBe(200);
  });

  it('is 404 for a key of another region, a revoked key and an expired key; 400 for an id that is no UUID', async () => {
    const elsewhere = await newRegion(t, 'Elsewhere');
    expectProblem(await get(region.key, elsewhere.keyId), 404, 'not-found');
    const revoked = await keyWith({});
    expect((await del(region.key, revoked.id)).statusCode).toBe(204);
    expectProblem(await get(region.key, revoked.id), 404, 'not-found');
    const expiring = await keyWith({ expiresAt: ahead(2 * MINUTE_MS) });
    expect((await get(region.key, expiring.id)).statusCode).toBe(200);
    later(2 * MINUTE_MS);
    expectProblem(await get(region.key, expiring.id), 404, 'not-found');
    expectProblem(await get(region.key, 'not-a-uuid'), 400, 'validation');
  });

  it('needs region:read', async () => {
    const writer = await keyWith({ permissions: ['keys:write'] });
    expectProblem(await get(writer.key, region.keyId), 403, 'insufficient-permission');
  });

  it('reads the id in either case, as every route of a key does', async () => {
    const other = await keyWith({ description: 'upper' });
    const upper = other.id.toUpperCase();
    const res = await get(region.key, upper);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual((await get(region.key, other.id)).json());
    const usage = await t.request({
      method: 'GET',
      url: `${keyUrl(upper)}/usage`,
      headers: { 'x-api-key': region.key },
    });
    expect(usage.statusCode).toBe(200);
    expect((await patch(region.key, upper, { description: 'renamed' })).json()).toMatchObject({ id: other.id });
    expect((await roll(region.key, upper, { revokeOldAfterSeconds: 60 })).statusCode).toBe(201);
    expect((await del(region.key, upper)).statusCode).toBe(204);
  });
});

describe('PATCH /auth/region/api-keys/:id', () => {
  it('changes the description, answers the key with its new ETag, and records one api_key.updated', async () => {
    const before = await get(region.key, region.keyId);
    later(1000);
    const res = await patch(region.key, region.keyId, { description: '  Nightly export  ' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: region.keyId,
      description: 'Nightly export',
      updatedAt: now().toISOString(),
    });
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(res.headers.etag).not.toBe(before.headers.etag);
    const after = await get(region.key, region.keyId);
    expect(after.json()).toMatchObject({ description: 'Nightly export' });
    expect(after.headers.etag).toBe(res.headers.etag);
    const [event] = await events(region.key);
    expect(event).toMatchObject({
      type: 'api_key.updated',
      apiKey: { id: region.keyId },
      actor: { type: 'api_key', apiKeyId: region.keyId },
      changes: { description: 'Nightly export' },
      clientAddress: expect.any(String),
      requestId: expect.any(String),
    });
    expect(Object.keys(event.changes)).toEqual(['description']);
    expect(JSON.stringify(event)).not.toContain(region.key);
  });

  it('takes a JSON Merge Patch (application/merge-patch+json): null clears, absent keeps', async () => {
    const key = await keyWith({ description: 'ci', allowedCidrs: ['203.0.113.0/24'], expiresAt: ahead(DAY_MS) });
    const res = await t.request({
      method: 'PATCH',
      url: keyUrl(key.id),
      headers: { 'x-api-key': region.key, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ description: null, allowedCidrs: null }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ description: null, allowedCidrs: null, expiresAt: key.expiresAt });
    expect((await events(region.key))[0].changes).toEqual({ description: null, allowedCidrs: null });
    // Elsewhere a merge patch is no JSON body the route reads.
    const elsewhere = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': region.key, 'content-type': 'application/merge-patch+json' },
      payload: '{}',
    });
    expectProblem(elsewhere, 415, 'unsupported-media-type');
    // The same checks as a JSON body: bytes that are not UTF-8 are refused.
    const notUtf8 = await t.request({
      method: 'PATCH',
      url: keyUrl(key.id),
      headers: { 'x-api-key': region.key, 'content-type': 'application/merge-patch+json' },
      payload: Buffer.from([0x7b, 0x22, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    });
    expectProblem(notUtf8, 400, 'malformed-json');
  });

  it('sets and clears allowedCidrs and expiresAt, validated as on create', async () => {
    const key = await keyWith({});
    const set = await patch(region.key, key.id, {
      allowedCidrs: ['2001:DB8::/48', '2001:db8::/48', '10.0.0.0/8'],
      expiresAt: ahead(30 * DAY_MS),
    });
    expect(set.json()).toMatchObject({
      allowedCidrs: ['2001:db8::/48', '10.0.0.0/8'],
      expiresAt: ahead(30 * DAY_MS),
    });
    expect((await events(region.key))[0]).toMatchObject({
      changes: { allowedCidrs: ['2001:db8::/48', '10.0.0.0/8'], expiresAt: ahead(30 * DAY_MS) },
      apiKey: { id: key.id, expiresAt: ahead(30 * DAY_MS) },
    });
    const cleared = await patch(region.key, key.id, { allowedCidrs: null, expiresAt: null });
    expect(cleared.json()).toMatchObject({ allowedCidrs: null, expiresAt: null });
    for (const [body, field] of [
      [{ allowedCidrs: [] }, 'allowedCidrs'],
      [{ allowedCidrs: ['::/0'] }, 'allowedCidrs'],
      [{ description: '' }, 'description'],
      [{ permissions: [] }, 'permissions'],
      [{ permissions: null }, 'permissions'],
      [{ expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ secret: 'x' }, 'secret'],
    ] as const) {
      const problem = expectProblem(await patch(region.key, key.id, body), 400, 'validation');
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('narrows permissions, refuses to widen them (400) and to grant beyond the caller (403)', async () => {
    const key = await keyWith({});
    expect((await patch(region.key, key.id, { permissions: ['region:read'] })).json()).toMatchObject({
      permissions: ['region:read'],
    });
    const widened = expectProblem(await patch(region.key, key.id, { permissions: ['region:read', 'keys:write'] }), 400);
    expect(widened.errors).toEqual([{ field: 'permissions', message: expect.stringContaining('keys:write') }]);
    const writer = await keyWith({ permissions: ['keys:write'] });
    const both = await keyWith({});
    expectProblem(await patch(writer.key, both.id, { permissions: ['region:read'] }), 403, 'insufficient-permission');
    const reader = await keyWith({ permissions: ['region:read'] });
    expectProblem(await patch(reader.key, both.id, { description: 'x' }), 403, 'insufficient-permission');
    expect((await get(region.key, both.id)).json()).toMatchObject({ permissions: ['region:read', 'keys:write'] });
  });

  it('refuses (403) a key that holds less giving a key that holds more more reach, as it refuses its roll; narrowing is allowed', async () => {
    const cidrs = ['203.0.113.0/24'];
    const expiresAt = ahead(DAY_MS);
    const target = await keyWith({ allowedCidrs: cidrs, expiresAt });
    const writer = await keyWith({ permissions: ['keys:write'] });
    for (const widening of [
      { allowedCidrs: null },
      { allowedCidrs: ['203.0.0.0/16'] },
      { allowedCidrs: ['203.0.113.0/24', '198.51.100.0/24'] },
      { expiresAt: null },
      { expiresAt: ahead(2 * DAY_MS) },
      { description: 'renamed', allowedCidrs: null },
    ]) {
      const body = expectProblem(await patch(writer.key, target.id, widening), 403, 'insufficient-permission');
      expect({ widening, detail: body.detail }).toEqual({ widening, detail: expect.stringContaining('region:read') });
    }
    expectProblem(await roll(writer.key, target.id, { allowedCidrs: null }), 403, 'insufficient-permission');
    expect((await get(region.key, target.id)).json()).toMatchObject({
      allowedCidrs: cidrs,
      expiresAt,
      description: null,
    });
    // Less reach, or a key narrowed to what the caller holds, is no grant of more.
    const narrowed = await patch(writer.key, target.id, {
      allowedCidrs: ['203.0.113.128/25'],
      expiresAt: ahead(60 * MINUTE_MS),
    });
    expect(narrowed.statusCode).toBe(200);
    expect((await patch(writer.key, target.id, { description: 'renamed' })).statusCode).toBe(200);
    const lifted = await patch(writer.key, target.id, {
      permissions: ['keys:write'],
      allowedCidrs: null,
      expiresAt: null,
    });
    expect(lifted.json()).toMatchObject({ permissions: ['keys:write'], allowedCidrs: null, expiresAt: null });
  });

  it('with If-Match: changes only the version it names (412 otherwise, 400 for a malformed one)', async () => {
    const key = await keyWith({ description: 'v1' });
    const etag = (await get(region.key, key.id)).headers.etag as string;
    expect((await patch(region.key, key.id, { description: 'v2' }, { 'if-match': etag })).statusCode).toBe(200);
    expectProblem(
      await patch(region.key, key.id, { description: 'v3' }, { 'if-match': etag }),
      412,
      'precondition-failed',
    );
    const current = (await get(region.key, key.id)).headers.etag as string;
    for (const ifMatch of ['nonsense', `nonsense ${current}`, `${current}, *`, `${current};q=1`]) {
      expectProblem(await patch(region.key, key.id, { description: 'v3' }, { 'if-match': ifMatch }), 400, 'validation');
    }
    const weak = expectProblem(
      await patch(region.key, key.id, { description: 'v3' }, { 'if-match': `W/${current}` }),
      412,
    );
    expect(weak.detail).toMatch(/compares entity tags strongly/);
    expect((await get(region.key, key.id)).json().description).toBe('v2');
    expect((await patch(region.key, key.id, { description: 'v3' }, { 'if-match': '*' })).statusCode).toBe(200);
    // If-None-Match on a change guards against changing what exists, as for planets.
    const latest = (await get(region.key, key.id)).headers.etag as string;
    for (const ifNoneMatch of ['*', latest]) {
      expectProblem(await patch(region.key, key.id, { description: 'v4' }, { 'if-none-match': ifNoneMatch }), 412);
    }
    expectProblem(
      await patch(region.key, key.id, { description: 'v4' }, { 'if-none-match': 'not-a-tag' }),
      400,
      'validation',
    );
    expect((await patch(region.key, key.id, { description: 'v4' }, { 'if-none-match': '"other"' })).statusCode).toBe(
      200,
    );
    // A key that is not there is 404 whatever the condition.
    expectProblem(await patch(region.key, (await newRegion(t)).keyId, {}, { 'if-match': '*' }), 404);
  });

  it('with If-Match on DELETE: revokes only the version it names (412 otherwise, 400 for a malformed one)', async () => {
    const key = await keyWith({ description: 'v1' });
    const etag = (await get(region.key, key.id)).headers.etag as string;
    expect((await patch(region.key, key.id, { description: 'v2' })).statusCode).toBe(200);
    for (const stale of [etag, `W/${(await get(region.key, key.id)).headers.etag as string}`]) {
      expectProblem(await del(region.key, key.id, { 'if-match': stale }), 412, 'precondition-failed');
    }
    expectProblem(await del(region.key, key.id, { 'if-none-match': '*' }), 412, 'precondition-failed');
    expectProblem(await del(region.key, key.id, { 'if-match': 'garbage' }), 400, 'validation');
    expect((await get(key.key, key.id)).statusCode).toBe(200);
    const current = (await get(region.key, key.id)).headers.etag as string;
    expect((await del(region.key, key.id, { 'if-match': current })).statusCode).toBe(204);
    expect((await get(region.key, key.id)).statusCode).toBe(404);
  });

  it('answers a read with If-Match only while a tag it names is current (412, 400 for a malformed one), and a 304 with the ETag a 200 carries', async () => {
    const key = await keyWith({ description: 'read' });
    const etag = (await get(region.key, key.id)).headers.etag as string;
    expect((await get(region.key, key.id, { 'if-match': etag })).statusCode).toBe(200);
    expect((await get(region.key, key.id, { 'if-match': `"other", ${etag}` })).statusCode).toBe(200);
    expectProblem(await get(region.key, key.id, { 'if-match': '"other"' }), 412, 'precondition-failed');
    expectProblem(await get(region.key, key.id, { 'if-match': `W/${etag}` }), 412, 'precondition-failed');
    expectProblem(await get(region.key, key.id, { 'if-match': 'garbage' }), 400, 'validation');
    // The client's weak form is answered with the tag itself; a coded one names a representation
    // this request would not get, so it gets the 200.
    for (const [held, status] of [
      [`W/${etag}`, 304],
      [`${etag.slice(0, -1)}-br"`, 200],
    ] as const) {
      const res = await get(region.key, key.id, { 'if-none-match': held });
      expect({ held, status: res.statusCode, etag: res.headers.etag }).toEqual({ held, status, etag });
    }
  });

  it('answers a patch that changes nothing with the key, and records no event', async () => {
    const key = await keyWith({ description: 'same', permissions: ['region:read'] });
    const count = (await events(region.key)).length;
    for (const body of [
      {},
      { description: 'same', permissions: ['region:read'], allowedCidrs: null, expiresAt: null },
    ]) {
      const res = await patch(region.key, key.id, body);
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe((await get(region.key, key.id)).headers.etag);
    }
    expect((await events(region.key)).length).toBe(count);
  });

  it('refuses to leave the region without a permanent managing key (409), and allows it when another remains', async () => {
    for (const body of [{ permissions: ['region:read'] }, { expiresAt: ahead(DAY_MS) }]) {
      expectProblem(await patch(region.key, region.keyId, body), 409, 'last-api-key');
    }
    // An allowlist that admits an address keeps the key a manager.
    expect((await patch(region.key, region.keyId, { allowedCidrs: ['0.0.0.0/0'] })).statusCode).toBe(200);
    const second = await keyWith({});
    expect((await patch(region.key, region.keyId, { expiresAt: ahead(DAY_MS) })).statusCode).toBe(200);
    expectProblem(await patch(second.key, second.id, { permissions: ['region:read'] }), 409, 'last-api-key');
  });

  it('never leaves zero managers under concurrent PATCHes and DELETEs of the last two', async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = await newRegion(t);
      const res = await create(fresh.key, {});
      const second: { id: string; key: string } = res.json();
      const replies: Reply[] = await Promise.all([
        patch(fresh.key, fresh.keyId, { permissions: ['region:read'] }),
        patch(second.key, second.id, { expiresAt: ahead(DAY_MS) }),
        del(fresh.key, second.id),
      ]);
      expect(replies.filter((r) => r.statusCode >= 200 && r.statusCode < 300).length).toBeGreaterThanOrEqual(1);
      expect(replies.some((r) => r.statusCode === 409)).toBe(true);
      expect(await managers(fresh.regionId)).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('expiresAt', () => {
  it('is refused less than a minute or more than 366 days ahead, or not a date-time with an offset', async () => {
    for (const expiresAt of [ahead(59_000), ahead(-DAY_MS), ahead(367 * DAY_MS), '2030-01-01T00:00:00', '2030-01-01']) {
      const problem = expectProblem(await create(region.key, { expiresAt }), 400, 'validation');
      expect(problem.errors).toEqual([{ field: 'expiresAt', message: expect.any(String) }]);
    }
    expect((await create(region.key, { expiresAt: ahead(MINUTE_MS) })).statusCode).toBe(201);
    expect((await create(region.key, { expiresAt: ahead(366 * DAY_MS) })).statusCode).toBe(201);
  });

  it('lists the key with its expiry until then; past it the key gets the 401 of a revoked key and is gone', async () => {
    const expiresAt = ahead(10 * MINUTE_MS);
    const key = await keyWith({ expiresAt });
    expect(key.expiresAt).toBe(expiresAt);
    expect((await me(region.key)).json().apiKeys).toContainEqual(expect.objectContaining({ id: key.id, expiresAt }));
    expect((await events(region.key))[0]).toMatchObject({ type: 'api_key.created', apiKey: { id: key.id, expiresAt } });
    expect((await me(key.key)).statusCode).toBe(200);

    const revoked = await keyWith({});
    await del(region.key, revoked.id);
    later(10 * MINUTE_MS);
    const refused = await me(key.key);
    const asRevoked = await me(revoked.key);
    expectProblem(refused, 401, 'unauthenticated');
    expect(refused.json().detail).toBe(asRevoked.json().detail);
    expect(refused.headers['www-authenticate']).toBe(asRevoked.headers['www-authenticate']);
    expect((await me(region.key)).json().apiKeys.map((k: { id: string }) => k.id)).not.toContain(key.id);
    expectProblem(await patch(region.key, key.id, { description: 'x' }), 404);
    expectProblem(await roll(region.key, key.id), 404);
    expectProblem(await del(region.key, key.id), 404);
  });

  it('does not count toward the last-key rule', async () => {
    await keyWith({ expiresAt: ahead(DAY_MS) });
    expectProblem(await del(region.key, region.keyId), 409, 'last-api-key');
  });

  it('is kept by a roll unless another is given (null: never); rolling the last manager into an expiring key is 409', async () => {
    expectProblem(await roll(region.key, region.keyId, { expiresAt: ahead(DAY_MS) }), 409, 'last-api-key');
    const expiresAt = ahead(3 * DAY_MS);
    const expiring = await keyWith({ expiresAt, permissions: ['region:read'] });
    const kept = await roll(region.key, expiring.id);
    expect(kept.json()).toMatchObject({ expiresAt });
    const [, rolled] = await events(region.key);
    expect(rolled).toMatchObject({ type: 'api_key.rolled', apiKey: { id: expiring.id, expiresAt } });
    const other = await keyWith({ expiresAt });
    expect((await roll(region.key, other.id, { expiresAt: null })).json()).toMatchObject({ expiresAt: null });
  });

  it('is counted by the api_keys_expiring gauge while within 7 days', async () => {
    const gauge = async () => {
      const text = await t.app.get(PrometheusMetrics).registry.getSingleMetricAsString(GAUGE);
      return Number(/\n[a-z_]+ (\S+)$/.exec(text.trim())?.[1]);
    };
    // Past every expiry the other tests set, so that only this test's keys are counted.
    later(800 * DAY_MS);
    const before = await gauge();
    expect(before).toBe(0);
    await keyWith({ expiresAt: ahead(3 * DAY_MS) });
    await keyWith({ expiresAt: ahead(30 * DAY_MS) });
    const revoked = await keyWith({ expiresAt: ahead(2 * DAY_MS) });
    await del(region.key, revoked.id);
    expect(await gauge()).toBe(before + 1);
    later(3 * DAY_MS);
    expect(await gauge()).toBe(before);
  });
});
