import { randomUUID } from 'node:crypto';

import { jest } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import { RegionKeysService } from '../../src/region-keys/region-keys.service';
import { nastyString } from '../support/hostile-input';
import { expectProblem } from '../support/problems';
import { propertyRuns } from '../support/property-runs';
import { newRegion, RegionFixture, startTestApp, TEST_ENV, TestApp } from '../support/test-app';

/** The region's audit trail: GET /auth/region/events. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CLIENT = '203.0.113.9';

let t: TestApp;
let region: RegionFixture;
let now: Date;

interface Event {
  id: string;
  type: string;
  occurredAt: string;
  actor: { type: string; apiKeyId?: string; tokenPreview?: string };
  apiKey: { id: string; tokenPreview: string; revokesAt?: string };
  clientAddress: string | null;
  requestId: string | null;
}

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());
beforeEach(async () => {
  // Time moves only when a test says so (a second before each change), so the times and
  // the order of events are known.
  now = new Date('2026-11-22T10:00:00.000Z');
  jest.spyOn(t.app.get(Clock), 'now').mockImplementation(() => new Date(now));
  region = await newRegion(t);
});
afterEach(() => jest.restoreAllMocks());

const tick = () => {
  now = new Date(now.getTime() + 1000);
};
const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, requestId: string, payload?: object) =>
  t.request({
    method,
    url,
    headers: { 'x-api-key': key, 'x-request-id': requestId },
    remoteAddress: CLIENT,
    ...(payload ? { payload } : {}),
  });
const create = async (key: string, requestId = 'create') => {
  tick();
  const res = await call('POST', '/auth/region/api-keys', key, requestId, {});
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string; key: string; tokenPreview: string }>();
};
const events = async (key: string, query = '') => {
  const res = await t.request({ method: 'GET', url: `/auth/region/events${query}`, headers: { 'x-api-key': key } });
  expect(res.statusCode).toBe(200);
  return res.json<{ data: Event[]; meta: { limit: number; next: string | null } }>();
};
/** Every event of the region, following the cursor to the end. */
const allEvents = async (key: string, limit = 100) => {
  const all: Event[] = [];
  let next: string | null = null;
  do {
    const page = await events(key, `?limit=${limit}${next ? `&cursor=${next}` : ''}`);
    all.push(...page.data);
    next = page.meta.next;
  } while (next);
  return all;
};

describe('GET /auth/region/events', () => {
  it('records every change with who made it, from where and in which request, newest first', async () => {
    const own = { type: 'api_key', apiKeyId: region.keyId, tokenPreview: expect.any(String) };
    const second = await create(region.key, 'req-create');
    tick();
    const rolled = (
      await call('POST', `/auth/region/api-keys/${second.id}/roll`, region.key, 'req-roll', {
        revokeOldAfterSeconds: 60,
      })
    ).json();
    tick();
    expect((await call('DELETE', `/auth/region/api-keys/${rolled.id}`, second.key, 'req-delete')).statusCode).toBe(204);

    const { data, meta } = await events(region.key);
    expect(meta).toEqual({ limit: 20, next: null });
    // The two events of the roll share its time; the new key's creation was written last.
    expect(data.map((e) => e.type)).toEqual([
      'api_key.revoked',
      'api_key.created',
      'api_key.rolled',
      'api_key.created',
      'region.created',
    ]);
    const [revoked, , , created, regionCreated] = data;
    const rollPair = data.slice(1, 3);

    expect(revoked).toEqual({
      id: expect.stringMatching(UUID),
      type: 'api_key.revoked',
      occurredAt: '2026-11-22T10:00:03.000Z',
      actor: { type: 'api_key', apiKeyId: second.id, tokenPreview: second.tokenPreview },
      apiKey: { id: rolled.id, tokenPreview: rolled.tokenPreview },
      clientAddress: CLIENT,
      requestId: 'req-delete',
    });
    expect(rollPair).toEqual([
      {
        id: expect.stringMatching(UUID),
        type: 'api_key.created',
        occurredAt: '2026-11-22T10:00:02.000Z',
        actor: own,
        apiKey: {
          id: rolled.id,
          tokenPreview: rolled.tokenPreview,
          permissions: ['region:read', 'keys:write'],
          allowedCidrs: null,
          rateLimit: null,
          replaces: { id: second.id },
        },
        clientAddress: CLIENT,
        requestId: 'req-roll',
      },
      {
        id: expect.stringMatching(UUID),
        type: 'api_key.rolled',
        occurredAt: '2026-11-22T10:00:02.000Z',
        actor: own,
        apiKey: {
          id: second.id,
          tokenPreview: second.tokenPreview,
          revokesAt: '2026-11-22T10:01:02.000Z',
          permissions: ['region:read', 'keys:write'],
          allowedCidrs: null,
          rateLimit: null,
          replacedBy: { id: rolled.id, tokenPreview: rolled.tokenPreview },
        },
        clientAddress: CLIENT,
        requestId: 'req-roll',
      },
    ]);
    expect(created).toMatchObject({
      type: 'api_key.created',
      actor: own,
      apiKey: { id: second.id },
      requestId: 'req-create',
    });
    expect(regionCreated).toEqual({
      id: expect.stringMatching(UUID),
      type: 'region.created',
      occurredAt: '2026-11-22T10:00:00.000Z',
      actor: { type: 'operator' },
      apiKey: {
        id: region.keyId,
        tokenPreview: expect.any(String),
        permissions: ['region:read', 'keys:write'],
        allowedCidrs: null,
        rateLimit: null,
      },
      clientAddress: null,
      requestId: null,
    });
    expect(JSON.stringify(data)).not.toContain(second.key);
  });

  it("records a key's own rate limit with what a create or roll grants, and says nothing where none was recorded", async () => {
    const rateLimit = { requests: 10, perSeconds: 60 };
    tick();
    const limited = (await call('POST', '/auth/region/api-keys', region.key, 'req-limited', { rateLimit })).json();
    tick();
    const rolled = (await call('POST', `/auth/region/api-keys/${limited.id}/roll`, region.key, 'req-roll', {})).json();
    // An event written before grants recorded a rate limit: permissions, and SQL NULL for the limit.
    await t.app.get(DataSource).query(
      `INSERT INTO region_events (id, region_id, type, occurred_at, actor_type, api_key_id, api_key_token_preview,
         api_key_permissions, api_key_allowed_cidrs)
       VALUES ($1, $2, 'api_key.created', '2026-11-01T00:00:00Z', 'operator', $3, 'rk_older', '{region:read}', NULL)`,
      [randomUUID(), region.regionId, randomUUID()],
    );

    const data = await allEvents(region.key);
    const grantOf = (type: string, id: string) =>
      data.find((e) => e.type === type && (e.apiKey as { id: string }).id === id)?.apiKey;
    expect(grantOf('api_key.created', limited.id)).toMatchObject({ permissions: expect.any(Array), rateLimit });
    expect(grantOf('api_key.rolled', limited.id)).toMatchObject({ rateLimit });
    expect(grantOf('api_key.created', rolled.id)).toMatchObject({ rateLimit });
    const older = data.find((e) => (e.apiKey as { tokenPreview: string }).tokenPreview === 'rk_older')?.apiKey;
    expect(older).toMatchObject({ permissions: ['region:read'], allowedCidrs: null });
    expect(older).not.toHaveProperty('rateLimit');
  });

  it('records nothing for failed requests or failed authentications', async () => {
    const before = await allEvents(region.key);
    const second = await create(region.key);
    const after = await allEvents(region.key);
    const failures = [
      call('DELETE', `/auth/region/api-keys/${second.id}`, 'rk_not-a-real-key-at-all-0123456789abcdef', 'x'), // 401
      call('DELETE', '/auth/region/api-keys/00000000-0000-4000-8000-000000000000', region.key, 'x'), // 404
      call('DELETE', '/auth/region/api-keys/not-a-uuid', region.key, 'x'), // 400
      call('POST', `/auth/region/api-keys/${second.id}/roll`, region.key, 'x', { revokeOldAfterSeconds: -1 }), // 400
      call('POST', '/auth/region/api-keys', region.key, 'x', { description: '' }), // 400
    ];
    expect((await Promise.all(failures)).map((r) => r.statusCode)).toEqual([401, 404, 400, 400, 400]);
    expect((await call('DELETE', `/auth/region/api-keys/${second.id}`, second.key, 'ok')).statusCode).toBe(204);
    expect((await call('DELETE', `/auth/region/api-keys/${region.keyId}`, region.key, 'x')).statusCode).toBe(409);
    expect(
      await call('POST', `/auth/region/api-keys/${region.keyId}/roll`, region.key, 'ok', { revokeOldAfterSeconds: 60 }),
    ).toHaveProperty('statusCode', 201);
    const rolledAgain = await call('POST', `/auth/region/api-keys/${region.keyId}/roll`, region.key, 'x', {});
    expect(rolledAgain.statusCode).toBe(409);

    const final = await allEvents(region.key);
    expect(after).toHaveLength(before.length + 1);
    // Only the successful DELETE and roll added events.
    expect(final.slice(0, final.length - after.length).map((e) => [e.type, e.requestId])).toEqual([
      ['api_key.created', 'ok'],
      ['api_key.rolled', 'ok'],
      ['api_key.revoked', 'ok'],
    ]);
  });

  it("shows only the caller's region", async () => {
    const other = await newRegion(t, 'Other region');
    await create(other.key);
    const mine = await allEvents(region.key);
    expect(mine.map((e) => e.type)).toEqual(['region.created']);
    expect(mine[0].apiKey.id).toBe(region.keyId);
  });

  it('keeps the events of a revoked key, and of the key that made them', async () => {
    const second = await create(region.key);
    const third = await create(second.key);
    expect((await call('DELETE', `/auth/region/api-keys/${second.id}`, third.key, 'gone')).statusCode).toBe(204);
    const trail = await allEvents(third.key);
    expect(trail.find((e) => e.apiKey.id === third.id && e.type === 'api_key.created')?.actor).toEqual({
      type: 'api_key',
      apiKeyId: second.id,
      tokenPreview: second.tokenPreview,
    });
    expect(trail.filter((e) => e.apiKey.id === second.id).map((e) => e.type)).toEqual([
      'api_key.revoked',
      'api_key.created',
    ]);
  });

  it('pages with a cursor that stays stable while new events are added', async () => {
    let key = region.key;
    for (let i = 0; i < 6; i++) key = (await create(key)).key;
    const expected = await allEvents(key); // 7 events
    expect(expected).toHaveLength(7);

    const seen: Event[] = [];
    let next: string | null = null;
    do {
      const page = await events(key, `?limit=3${next ? `&cursor=${next}` : ''}`);
      expect(page.meta.limit).toBe(3);
      seen.push(...page.data);
      next = page.meta.next;
      // Newer events arrive between pages; they belong before the first page, not in later ones.
      await create(key);
    } while (next);
    expect(seen).toEqual(expected);
    const fresh = await events(key, '?limit=3');
    expect(fresh.data.every((e) => e.type === 'api_key.created' && e.occurredAt > expected[0].occurredAt)).toBe(true);
  });

  it('answers an empty last page with next null', async () => {
    const page = await events(region.key, '?limit=1');
    expect(page).toEqual({
      data: [expect.objectContaining({ type: 'region.created' })],
      meta: { limit: 1, next: null },
    });
  });

  it.each([
    ['limit', '?limit=0'],
    ['limit', '?limit=101'],
    ['limit', '?limit=ten'],
    ['cursor', '?cursor=not-ours'],
    ['cursor', `?cursor=${Buffer.from('2026-11-22T10:00:00.000Z not-a-number').toString('base64url')}`],
    ['cursor', '?cursor=%2B%2F%3D'],
    ['cursor', `?cursor=${'A'.repeat(201)}`],
    ['unexpected', '?unexpected=1'],
  ])('answers a bad %s (case %#) with a 400 problem naming it', async (field, query) => {
    const res = await t.request({
      method: 'GET',
      url: `/auth/region/events${query}`,
      headers: { 'x-api-key': region.key },
    });
    const body = expectProblem(res, 400, 'validation');
    expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  /** The cursor's refusal: a 400 naming it, and not a line at error level in the logs. */
  const expectCursorRefused = async (key: string, cursor: string) => {
    const firstLog = t.logs.length;
    // Every UTF-8 byte percent-encoded: encodeURIComponent refuses lone surrogates.
    const encoded = [...Buffer.from(cursor, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    const res = await t.request({
      method: 'GET',
      url: `/auth/region/events?cursor=${encoded}`,
      headers: { 'x-api-key': key },
    });
    const where = { cursor, status: res.statusCode, body: res.body.slice(0, 200) };
    expect({ ...where, status: res.statusCode }).toEqual({ ...where, status: 400 });
    expect(expectProblem(res, 400, 'validation').errors.map((e: { field: string }) => e.field)).toEqual(['cursor']);
    const errorLines = t.logs.slice(firstLog).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect({ cursor, errorLines }).toEqual({ cursor, errorLines: [] });
  };

  it('answers cursors it did not hand out with a 400, never a 500, and logs no error', async () => {
    // The old format with an insertion number past PostgreSQL's bigint: once a 500 with a stack trace.
    await expectCursorRefused(
      region.key,
      Buffer.from('2026-11-22T10:00:00.000Z 9999999999999999999').toString('base64url'),
    );
    const oldStyle = fc
      .tuple(fc.date({ noInvalidDate: true }), fc.bigInt({ min: 0n, max: 10n ** 25n }))
      .map(([time, seq]) => Buffer.from(`${time.toISOString()} ${seq}`).toString('base64url'));
    const bytes = fc.uint8Array({ minLength: 0, maxLength: 40 }).map((b) => Buffer.from(b).toString('base64url'));
    const eventIds = fc.uuid().map((id) => Buffer.from(id.replace(/-/g, ''), 'hex').toString('base64url'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          oldStyle,
          bytes,
          eventIds,
          nastyString.filter((c) => c !== ''),
        ),
        async (cursor) => {
          await expectCursorRefused(region.key, cursor);
        },
      ),
      propertyRuns(150),
    );
  });

  it('gives cursors that show nothing of the service-wide insertion number', async () => {
    // Insertion numbers as long as they get, so that no digits of them can hide by chance.
    await t.app
      .get(DataSource)
      .query(`SELECT setval(pg_get_serial_sequence('region_events', 'seq'), 9000000000000000000)`);
    let key = region.key;
    for (let i = 0; i < 3; i++) key = (await create(key)).key;
    const first = await events(key, '?limit=2');
    const [{ seq }] = await t.app
      .get(DataSource)
      .query('SELECT seq FROM region_events WHERE id = $1', [first.data[1].id]);
    expect(String(seq)).toMatch(/^9000000000000000\d{3}$/);
    const decoded = Buffer.from(first.meta.next!, 'base64url').toString('latin1');
    expect(decoded).not.toContain(String(seq).slice(-6));
    expect(decoded).not.toContain(String(seq).slice(0, 6));
    expect(decoded).not.toContain('2026');
    // It still pages: the rest follows, in order.
    const rest = await events(key, `?limit=10&cursor=${first.meta.next}`);
    expect([...first.data, ...rest.data]).toEqual(await allEvents(key));
  });

  it('refuses a tampered cursor', async () => {
    let key = region.key;
    for (let i = 0; i < 2; i++) key = (await create(key)).key;
    const { next } = (await events(key, '?limit=1')).meta;
    expect((await events(key, `?limit=1&cursor=${next}`)).data).toHaveLength(1);
    for (const position of [0, 10, 20]) {
      const tampered = next!.slice(0, position) + (next![position] === 'A' ? 'B' : 'A') + next!.slice(position + 1);
      await expectCursorRefused(key, tampered);
    }
  });

  it("refuses another region's cursor, so a cursor says nothing across regions", async () => {
    const other = await newRegion(t, 'Other region');
    await create(other.key);
    await create(region.key);
    const theirs = (await events(other.key, '?limit=1')).meta.next!;
    const mine = (await events(region.key, '?limit=1')).meta.next!;
    expect((await events(other.key, `?cursor=${theirs}`)).data).toHaveLength(1);
    await expectCursorRefused(region.key, theirs);
    await expectCursorRefused(other.key, mine);
  });

  it('needs a key, and a failed authentication is not recorded', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/auth/region/events' }), 401);
    expect(await allEvents(region.key)).toHaveLength(1);
  });
});

describe('the events table', () => {
  it('is append-only: rows cannot be changed or removed', async () => {
    const db = t.app.get(DataSource);
    await expect(
      db.query("UPDATE region_events SET request_id = 'forged' WHERE region_id = $1", [region.regionId]),
    ).rejects.toThrow(/append-only/);
    await expect(db.query('DELETE FROM region_events WHERE region_id = $1', [region.regionId])).rejects.toThrow(
      /append-only/,
    );
    expect(await allEvents(region.key)).toHaveLength(1);
  });

  it('has the region made at first start, by an operator', async () => {
    const { data } = await events(TEST_ENV.INITIAL_REGION_API_KEY);
    expect(data).toEqual([
      expect.objectContaining({
        type: 'region.created',
        actor: { type: 'operator' },
        clientAddress: null,
        requestId: null,
      }),
    ]);
  });

  it('records operator changes without a client address or request id', async () => {
    await t.app
      .get(RegionKeysService)
      .createKey(
        region.regionId,
        { description: 'from the CLI' },
        { actor: { type: 'operator' }, clientAddress: null, requestId: null },
      );
    const [latest] = (await events(region.key, '?limit=1')).data;
    expect(latest).toMatchObject({
      type: 'api_key.created',
      actor: { type: 'operator' },
      clientAddress: null,
      requestId: null,
    });
  });
});
