import { setTimeout as sleep } from 'node:timers/promises';

import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { SecurityCounters } from '../../src/common/metrics/security-counters';
import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { onlyHostRefusal } from '../support/problem-examples';
import { expectProblem } from '../support/problems';
import { expectRateLimitFields } from '../support/rate-limits';
import { TwoInstances, twoInstancesSharingRedis } from '../support/redis';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';

type Reply = Awaited<ReturnType<TestApp['request']>>;
type Limit = { requests: number; perSeconds: number };

/** The region default of the first suite: faster than the limits its keys are given (a region's first key makes them). */
const REGION_DEFAULT = { requests: 100000, perSeconds: 60 };

let t: TestApp;

const send = (app: TestApp, key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.request({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload }) });
const me = (key: string, app = t) => send(app, key, 'GET', '/auth/regions/me');
const create = (key: string, payload: object = {}) => send(t, key, 'POST', '/auth/region/api-keys', payload);
const roll = (key: string, id: string, payload: object = {}) =>
  send(t, key, 'POST', `/auth/region/api-keys/${id}/roll`, { revokeOldAfterSeconds: 60, ...payload });
const patch = (key: string, id: string, payload: object) =>
  send(t, key, 'PATCH', `/auth/region/api-keys/${id}`, payload);

/** A key of `region` with the fields given (made by the region's first key, which has the region default). */
async function keyWith(region: RegionFixture, payload: object): Promise<{ id: string; key: string; rateLimit: Limit }> {
  const res = await create(region.key, payload);
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  return res.json();
}

/** The RateLimit headers of a key's limit (draft-ietf-httpapi-ratelimit-headers, and X-RateLimit-*). */
function expectKeyHeaders(res: Reply, { requests, perSeconds }: Limit, remaining: number) {
  expectRateLimitFields(res, 'api-key', requests, perSeconds, remaining);
  expect(res.headers['x-ratelimit-limit']).toBe(String(requests));
}

function expectNoKeyHeaders(res: Reply) {
  for (const name of ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining'])
    expect({ name, value: res.headers[name] }).toEqual({ name, value: undefined });
}

function expectKeyRefused(res: Reply, limit: Limit) {
  const body = expectProblem(res, 429, 'too-many-requests');
  expect(body.detail).toMatch(
    new RegExp(
      `^Too many requests with this API key: it may make ${limit.requests} every ${limit.perSeconds} seconds\\. Retry in \\d+ seconds\\.$`,
    ),
  );
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(limit.perSeconds);
  expectKeyHeaders(res, limit, 0);
}

describe('a key with a rate limit (counters in memory)', () => {
  beforeAll(async () => {
    t = await startTestApp({ REGION_KEY_RATE_LIMIT: `${REGION_DEFAULT.requests}/${REGION_DEFAULT.perSeconds}` });
  });
  afterAll(async () => t?.close());
  afterEach(() => jest.restoreAllMocks());

  describe('rateLimit on the key', () => {
    it('is null (the region default) for a key made by an operator, and a new key takes its creator’s by default', async () => {
      const region = await newRegion(t);
      const listed = (await me(region.key)).json().apiKeys;
      expect(listed).toEqual([expect.objectContaining({ id: region.keyId, rateLimit: null })]);
      expect((await keyWith(region, {})).rateLimit).toBeNull();

      const limited = await keyWith(region, { rateLimit: { requests: 50, perSeconds: 60 } });
      expect(limited.rateLimit).toEqual({ requests: 50, perSeconds: 60 });
      const child = await create(limited.key, { permissions: ['region:read'] });
      expect(child.statusCode).toBe(201);
      expect(child.json().rateLimit).toEqual({ requests: 50, perSeconds: 60 });
      // Asked for null: the region default, which is faster than the creator's own.
      expectProblem(await create(limited.key, { rateLimit: null }), 403, 'rate-limit-above-caller');
    });

    it("keeps the old key's on a roll unless another is asked for", async () => {
      const region = await newRegion(t);
      const old = await keyWith(region, { rateLimit: { requests: 20, perSeconds: 10 } });
      const kept = await roll(region.key, old.id);
      expect(kept.statusCode).toBe(201);
      expect(kept.json().rateLimit).toEqual({ requests: 20, perSeconds: 10 });

      const other = await keyWith(region, {});
      const asked = await roll(region.key, other.id, { rateLimit: { requests: 5, perSeconds: 1 } });
      expect(asked.statusCode).toBe(201);
      expect(asked.json().rateLimit).toEqual({ requests: 5, perSeconds: 1 });
    });

    it('is set by a PATCH, and null sets it back to the region default; the change is an api_key.updated event', async () => {
      const region = await newRegion(t);
      const key = await keyWith(region, {});
      const set = await patch(region.key, key.id, { rateLimit: { requests: 7, perSeconds: 3 } });
      expect(set.statusCode).toBe(200);
      expect(set.json().rateLimit).toEqual({ requests: 7, perSeconds: 3 });
      // Left out: unchanged.
      expect((await patch(region.key, key.id, { description: 'renamed' })).json().rateLimit).toEqual({
        requests: 7,
        perSeconds: 3,
      });
      const cleared = await patch(region.key, key.id, { rateLimit: null });
      expect(cleared.json().rateLimit).toBeNull();

      const events = (await send(t, region.key, 'GET', '/auth/region/events')).json().data;
      const changes = events.filter((e: { type: string }) => e.type === 'api_key.updated').map((e: any) => e.changes);
      expect(changes).toEqual([
        { rateLimit: null },
        { description: 'renamed' },
        { rateLimit: { requests: 7, perSeconds: 3 } },
      ]);
    });
  });

  describe('a key never grants a faster rate than its own', () => {
    let region: RegionFixture;
    let caller: { id: string; key: string };
    // 33⅓ requests a second: a rate no float holds exactly.
    const own = { requests: 100, perSeconds: 3 };

    beforeAll(async () => {
      region = await newRegion(t);
      caller = await keyWith(region, { rateLimit: own });
    });

    it.each([
      ['the same limit', own],
      ['the same rate in other numbers', { requests: 100000, perSeconds: 3000 }],
      ['a slower one', { requests: 99999, perSeconds: 3000 }],
    ])('creates, rolls and patches to %s', async (_name, rateLimit) => {
      const made = await create(caller.key, { rateLimit });
      expect({ status: made.statusCode, body: made.body }).toMatchObject({ status: 201 });
      const rolled = await roll(caller.key, made.json().id, { rateLimit });
      expect({ status: rolled.statusCode, body: rolled.body }).toMatchObject({ status: 201 });
      const target = await keyWith(region, { rateLimit: { requests: 1, perSeconds: 3600 } });
      const patched = await patch(caller.key, target.id, { rateLimit });
      expect({ status: patched.statusCode, body: patched.body }).toMatchObject({ status: 200 });
    });

    it.each([
      ['a rate faster by one request in 50 minutes', { requests: 100000, perSeconds: 2999 }],
      ['the region default (null)', null],
      ['the most there is', { requests: 100000, perSeconds: 1 }],
    ])('refuses with 403 to create, roll or patch to %s, changing nothing', async (_name, rateLimit) => {
      const target = await keyWith(region, { rateLimit: { requests: 1, perSeconds: 3600 } });
      for (const res of [
        await create(caller.key, { rateLimit }),
        await roll(caller.key, target.id, { rateLimit }),
        await patch(caller.key, target.id, { rateLimit }),
      ]) {
        const body = expectProblem(res, 403, 'rate-limit-above-caller');
        expect(body.detail).toContain("faster than this key's own 100 requests per 3 seconds");
        expectKeyHeaders(res, own, Number(res.headers['x-ratelimit-remaining']));
      }
      const keys = (await me(region.key)).json().apiKeys;
      expect(keys.find((k: { id: string }) => k.id === target.id).rateLimit).toEqual({ requests: 1, perSeconds: 3600 });
    });

    it("refuses a roll that would keep the old key's faster limit, saying so", async () => {
      const fast = await keyWith(region, { rateLimit: { requests: 40, perSeconds: 1 } });
      const body = expectProblem(await roll(caller.key, fast.id), 403, 'rate-limit-above-caller');
      expect(body.detail).toMatch(/^A roll keeps the old key's rate limit unless another is asked for/);
    });

    it('compares with the region default when the caller has none of its own', async () => {
      const res = await create(region.key, { rateLimit: { requests: 100000, perSeconds: 59 } });
      expect(expectProblem(res, 403, 'rate-limit-above-caller').detail).toContain('100000 requests per 60 seconds');
      expect((await create(region.key, { rateLimit: { requests: 100000, perSeconds: 61 } })).statusCode).toBe(201);
    });
  });

  describe('careless and hostile rateLimit values', () => {
    let region: RegionFixture;
    let target: string;
    beforeAll(async () => {
      region = await newRegion(t);
      target = (await keyWith(region, {})).id;
    });

    it.each([
      ['requests 0', { requests: 0, perSeconds: 60 }, 'rateLimit.requests'],
      ['requests 100001', { requests: 100001, perSeconds: 60 }, 'rateLimit.requests'],
      ['perSeconds 0', { requests: 10, perSeconds: 0 }, 'rateLimit.perSeconds'],
      ['perSeconds 3601', { requests: 10, perSeconds: 3601 }, 'rateLimit.perSeconds'],
      ['a float', { requests: 1.5, perSeconds: 60 }, 'rateLimit.requests'],
      ['a negative number', { requests: 10, perSeconds: -60 }, 'rateLimit.perSeconds'],
      ['a numeric string', { requests: '10', perSeconds: 60 }, 'rateLimit.requests'],
      ['a missing field', { requests: 10 }, 'rateLimit.perSeconds'],
      ['an extra field', { requests: 10, perSeconds: 60, burst: 5 }, 'rateLimit.burst'],
      ['a string', '600/60', 'rateLimit'],
      ['an array', [10, 60], 'rateLimit'],
      ['a number', 600, 'rateLimit'],
      ['a huge number', { requests: 1e300, perSeconds: 60 }, 'rateLimit.requests'],
    ])('answers %s with a 400 naming the field, on create, roll and PATCH', async (_name, rateLimit, field) => {
      for (const res of [
        await create(region.key, { rateLimit }),
        await roll(region.key, target, { rateLimit }),
        await patch(region.key, target, { rateLimit }),
      ]) {
        const body = expectProblem(res, 400, 'validation');
        expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
        // Refused after the key was counted: the answer says what is left of its limit.
        expect(res.headers['ratelimit-policy']).toBe('"api-key";q=100000;w=60');
      }
    });
  });

  describe('counting', () => {
    it('answers `requests` requests in the window on any region route, then 429 with Retry-After on every one', async () => {
      const region = await newRegion(t);
      const limit = { requests: 3, perSeconds: 3600 };
      const key = await keyWith(region, { rateLimit: limit });
      const first = await me(key.key);
      expect(first.statusCode).toBe(200);
      expectKeyHeaders(first, limit, 2);
      const second = await send(t, key.key, 'GET', '/auth/region/events');
      expect(second.statusCode).toBe(200);
      expectKeyHeaders(second, limit, 1);
      const third = await send(t, key.key, 'GET', `/auth/region/api-keys/${key.id}/usage`);
      expect(third.statusCode).toBe(200);
      expectKeyHeaders(third, limit, 0);

      const counters = t.app.get(SecurityCounters);
      const refusals = jest.spyOn(counters, 'rateLimited');
      expectKeyRefused(await me(key.key), limit);
      expectKeyRefused(await create(key.key, {}), limit);
      // Counted without the key: one series for every key's refusals.
      expect(refusals.mock.calls).toEqual([['api_key'], ['api_key']]);

      // Each key has a counter of its own.
      const other = await me(region.key);
      expect(other.statusCode).toBe(200);
      expectKeyHeaders(other, REGION_DEFAULT, Number(other.headers['x-ratelimit-remaining']));
      expect(Number(other.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
    });

    it('refuses a spent key until its window ends, not for a window from the refusal', async () => {
      const region = await newRegion(t);
      const limit = { requests: 1, perSeconds: 3600 };
      const key = await keyWith(region, { rateLimit: limit });
      const accepted = await me(key.key);
      expect(accepted.statusCode).toBe(200);
      const windowEndsIn = Number(/;t=(\d+)/.exec(String(accepted.headers.ratelimit))?.[1]);
      // A second at least later, a wait counted from the refusal would be the whole window again.
      await sleep(1100);
      const refused = await me(key.key);
      expectKeyRefused(refused, limit);
      expect(Number(refused.headers['retry-after'])).toBeLessThan(windowEndsIn);
    });

    it('carries the headers on errors after authentication: a missing permission, an unknown id, a bad body', async () => {
      const region = await newRegion(t);
      const limit = { requests: 10, perSeconds: 60 };
      const reader = await keyWith(region, { permissions: ['region:read'], rateLimit: limit });
      const refused = await create(reader.key, {});
      expectProblem(refused, 403, 'insufficient-permission');
      expectKeyHeaders(refused, limit, 9);
      const missing = await send(t, reader.key, 'GET', '/auth/region/api-keys/00000000-0000-4000-8000-000000000000');
      expectProblem(missing, 404);
      expectKeyHeaders(missing, limit, 8);
      const invalid = await send(t, reader.key, 'GET', '/auth/region/events?limit=0');
      expectProblem(invalid, 400, 'validation');
      expectKeyHeaders(invalid, limit, 7);
    });

    it('counts nothing and sends no RateLimit headers for a request no key was accepted for', async () => {
      const region = await newRegion(t);
      const limit = { requests: 2, perSeconds: 3600 };
      const key = await keyWith(region, { rateLimit: limit, allowedCidrs: ['203.0.113.0/24'] });
      const refusals = [
        await me(generateApiKey()), // well-formed, never issued
        await me('rk_malformed'),
        await t.request({ method: 'GET', url: '/auth/regions/me' }),
      ];
      for (const res of refusals) {
        expectProblem(res, 401);
        expectNoKeyHeaders(res);
      }
      // The key itself, from an address its allowlist refuses: not accepted, not counted.
      for (let i = 0; i < 3; i++) {
        const outside = await t.request({
          method: 'GET',
          url: '/auth/regions/me',
          headers: { 'x-api-key': key.key },
          remoteAddress: '198.51.100.1',
        });
        expectProblem(outside, 403, 'address-not-allowed');
        expectNoKeyHeaders(outside);
      }
      for (const remaining of [1, 0]) {
        const inside = await t.request({
          method: 'GET',
          url: '/auth/regions/me',
          headers: { 'x-api-key': key.key },
          remoteAddress: '203.0.113.9',
        });
        expect(inside.statusCode).toBe(200);
        expectKeyHeaders(inside, limit, remaining);
      }
    });

    it('counts a changed limit in a window of its own', async () => {
      const region = await newRegion(t);
      const key = await keyWith(region, { rateLimit: { requests: 1, perSeconds: 3600 } });
      expect((await me(key.key)).statusCode).toBe(200);
      expectKeyRefused(await me(key.key), { requests: 1, perSeconds: 3600 });
      await patch(region.key, key.id, { rateLimit: { requests: 2, perSeconds: 3600 } });
      const after = await me(key.key);
      expect(after.statusCode).toBe(200);
      expectKeyHeaders(after, { requests: 2, perSeconds: 3600 }, 1);
    });
  });

  it('declares the 429 and the RateLimit headers on every region operation, on each answer sent after authentication', async () => {
    const doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
    let operations = 0;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        if (!operation['x-required-permission']) continue;
        operations += 1;
        expect({ path, method, statuses: Object.keys(operation.responses) }).toEqual({
          path,
          method,
          statuses: expect.arrayContaining(['429']),
        });
        expect(Object.keys(operation.responses['429'].headers)).toEqual(
          expect.arrayContaining(['Retry-After', 'RateLimit-Policy', 'RateLimit', 'X-RateLimit-Remaining']),
        );
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          const declared = Object.keys(response.headers ?? {}).includes('RateLimit-Policy');
          expect({ path, method, status, declared }).toEqual({
            path,
            method,
            status,
            declared: !['401', '413', '415'].includes(status) && !onlyHostRefusal(response),
          });
        }
      }
    }
    expect(operations).toBeGreaterThanOrEqual(7);
  });
});

/**
 * Gives `to` the rows of `from` with these ids, unless it has them: on the embedded database each
 * instance has its own, where two replicas would share one (the PostgreSQL pass shares it already).
 */
async function shareRows(from: TestApp, to: TestApp, table: string, ids: string[]) {
  const rows: Record<string, unknown>[] = await from.app
    .get(DataSource)
    .query(`SELECT * FROM ${table} WHERE id = ANY($1)`, [ids]);
  for (const row of rows) {
    const names = Object.keys(row);
    await to.app
      .get(DataSource)
      .query(
        `INSERT INTO ${table} (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT DO NOTHING`,
        Object.values(row),
      );
  }
}

describe('with REDIS_URL: two instances count one key together', () => {
  let instances: TwoInstances;

  beforeAll(async () => {
    instances = await twoInstancesSharingRedis({});
  });
  afterAll(async () => instances?.close());

  it('gives a key with `requests: 3` three answers in total across both, then 429 on both', async () => {
    const { a, b } = instances;
    const region = await newRegion(a);
    const made = await send(a, region.key, 'POST', '/auth/region/api-keys', {
      rateLimit: { requests: 3, perSeconds: 3600 },
    });
    expect(made.statusCode).toBe(201);
    const { id, key } = made.json();
    await shareRows(a, b, 'regions', [region.regionId]);
    await shareRows(a, b, 'api_keys', [region.keyId, id]);
    const limit = { requests: 3, perSeconds: 3600 };
    const answers = [await me(key, a), await me(key, b), await me(key, a)];
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200]);
    answers.forEach((res, i) => expectKeyHeaders(res, limit, 2 - i));
    expectKeyRefused(await me(key, b), limit);
    expectKeyRefused(await me(key, a), limit);
  });

  it('answers exactly `requests` of 30 requests sent at the same moment to both', async () => {
    const { a, b } = instances;
    const region = await newRegion(a);
    const limit = { requests: 5, perSeconds: 3600 };
    const made = await send(a, region.key, 'POST', '/auth/region/api-keys', { rateLimit: limit });
    expect(made.statusCode).toBe(201);
    const { id, key } = made.json();
    await shareRows(a, b, 'regions', [region.regionId]);
    await shareRows(a, b, 'api_keys', [region.keyId, id]);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => me(key, i % 2 ? a : b)));
    const statuses = answers.map((res) => res.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(limit.requests);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30 - limit.requests);
    for (const res of answers.filter((answer) => answer.statusCode === 429)) expectKeyRefused(res, limit);
  });
});

describe('with REDIS_URL unreachable', () => {
  it('counts each key in this instance instead of refusing every request or none', async () => {
    const app = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_COMMAND_TIMEOUT_MS: '100' });
    try {
      const region = await newRegion(app);
      const made = await send(app, region.key, 'POST', '/auth/region/api-keys', {
        rateLimit: { requests: 2, perSeconds: 60 },
      });
      expect(made.statusCode).toBe(201);
      const key = made.json().key;
      expect((await me(key, app)).statusCode).toBe(200);
      expectKeyHeaders(await me(key, app), { requests: 2, perSeconds: 60 }, 0);
      expectKeyRefused(await me(key, app), { requests: 2, perSeconds: 60 });
    } finally {
      await app.close();
    }
  });
});
