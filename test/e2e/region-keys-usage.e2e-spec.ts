import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import { KeyUsageRepository } from '../../src/region-keys/key-usage/key-usage.repository';
import { KeyUsageCounter } from '../../src/region-keys/key-usage/key-usage-counter';
import { expectProblem } from '../support/problems';
import {
  createKey,
  newRegion,
  RegionFixture,
  startTestApp,
  TestApp,
  type TwoApps,
  twoInstances,
} from '../support/test-app';
import { usesPostgresServer } from '../support/test-database';

const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);

const me = (t: TestApp, key: string) =>
  t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });
const usage = (t: TestApp, key: string, id: string, query = '') =>
  t.request({ method: 'GET', url: `/auth/region/api-keys/${id}/usage${query}`, headers: { 'x-api-key': key } });

/** Every SQL statement the app sends from now on, the app's own queries going through as before. */
function recordStatements(t: TestApp): { statements: string[]; stop: () => void } {
  const dataSource = t.app.get(DataSource);
  const statements: string[] = [];
  const original = dataSource.query.bind(dataSource);
  const spy = jest.spyOn(dataSource, 'query').mockImplementation((sql: string, ...rest: any[]) => {
    statements.push(sql);
    return original(sql, ...rest);
  });
  return { statements, stop: () => spy.mockRestore() };
}

const usageWrites = (statements: string[]) => statements.filter((sql) => /INSERT INTO api_key_usage/.test(sql));

async function storedRows(t: TestApp, apiKeyId: string): Promise<{ day: string; requests: number }[]> {
  const rows: { day: string; requests: string }[] = await t.app
    .get(DataSource)
    .query('SELECT day::text AS day, requests FROM api_key_usage WHERE api_key_id = $1 ORDER BY day', [apiKeyId]);
  return rows.map((row) => ({ day: row.day, requests: Number(row.requests) }));
}

describe('per-key usage', () => {
  let t: TestApp;
  let region: RegionFixture;
  let clock: Clock;

  beforeAll(async () => {
    t = await startTestApp();
    clock = t.app.get(Clock);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    jest.restoreAllMocks();
    // A fixed time: a test that runs across midnight UTC would see its counts split in two days.
    jest.spyOn(clock, 'now').mockReturnValue(new Date('2030-01-15T12:00:00.000Z'));
    await t.app.get(KeyUsageCounter).flush();
    region = await newRegion(t);
  });

  it('counts requests in memory, writes nothing per request, and writes all keys in one statement at the flush', async () => {
    const other = await createKey(t, region.key);
    await t.app.get(KeyUsageCounter).flush();
    const today = dayOf(clock.now());
    // The request that created the other key.
    expect(await storedRows(t, region.keyId)).toEqual([{ day: today, requests: 1 }]);
    const recorded = recordStatements(t);
    for (let i = 0; i < 5; i++) expect((await me(t, region.key)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await me(t, other.key)).statusCode).toBe(200);
    // A refused key is not an authenticated request.
    expect((await me(t, 'rk_not-a-key-at-all')).statusCode).toBe(401);
    // Nor of the hourly counts or the clients.
    expect(recorded.statements.filter((sql) => /api_key_(usage|hourly_usage|clients)/.test(sql))).toEqual([]);
    expect(await storedRows(t, region.keyId)).toEqual([{ day: today, requests: 1 }]);
    expect(await storedRows(t, other.id)).toEqual([]);

    await t.app.get(KeyUsageCounter).flush();
    recorded.stop();
    expect(usageWrites(recorded.statements)).toHaveLength(1);
    expect(await storedRows(t, region.keyId)).toEqual([{ day: today, requests: 6 }]);
    expect(await storedRows(t, other.id)).toEqual([{ day: today, requests: 3 }]);

    // Nothing pending: a flush writes nothing.
    const again = recordStatements(t);
    await t.app.get(KeyUsageCounter).flush();
    again.stop();
    expect(usageWrites(again.statements)).toEqual([]);
  });

  it("lists every UTC day of the window oldest first, days without requests as 0, with this instance's pending counts", async () => {
    const now = new Date('2030-03-10T12:00:00.000Z');
    const at = (time: Date) => jest.spyOn(clock, 'now').mockReturnValue(time);
    at(new Date(now.getTime() - 2 * DAY_MS));
    for (let i = 0; i < 3; i++) await me(t, region.key);
    await t.app.get(KeyUsageCounter).flush();
    at(new Date('2030-03-10T00:00:00.000Z'));
    await me(t, region.key);
    await t.app.get(KeyUsageCounter).flush();
    at(now);
    await me(t, region.key); // not flushed: counted in this instance's memory

    const res = await usage(t, region.key, region.keyId, '?days=3');
    expect(res.statusCode).toBe(200);
    // Today: the flushed request, the pending one, and this usage request itself.
    expect(res.json()).toEqual({
      data: [
        { date: '2030-03-08', requests: 3 },
        { date: '2030-03-09', requests: 0 },
        { date: '2030-03-10', requests: 3 },
      ],
    });

    const byDefault = (await usage(t, region.key, region.keyId)).json().data;
    expect(byDefault).toHaveLength(30);
    expect(byDefault[0]).toEqual({ date: '2030-02-09', requests: 0 });
    expect(byDefault[29]).toEqual({ date: '2030-03-10', requests: 4 });
    expect((await usage(t, region.key, region.keyId, '?days=90')).json().data).toHaveLength(90);
  });

  it('shows a rolled key going quiet while its replacement takes the requests', async () => {
    const at = (time: string) => jest.spyOn(clock, 'now').mockReturnValue(new Date(time));
    at('2030-04-01T10:00:00.000Z');
    const rolled = await t.request({
      method: 'POST',
      url: `/auth/region/api-keys/${region.keyId}/roll`,
      headers: { 'x-api-key': region.key },
      payload: { revokeOldAfterSeconds: 3 * 86400 },
    });
    expect(rolled.statusCode).toBe(201);
    const replacement = rolled.json<{ id: string; key: string }>();
    await me(t, region.key);
    at('2030-04-02T10:00:00.000Z');
    for (let i = 0; i < 4; i++) await me(t, replacement.key);
    await t.app.get(KeyUsageCounter).flush();

    const old = (await usage(t, replacement.key, region.keyId, '?days=2')).json();
    expect(old.data).toEqual([
      { date: '2030-04-01', requests: 2 },
      { date: '2030-04-02', requests: 0 },
    ]);
    const fresh = (await usage(t, replacement.key, replacement.id, '?days=2')).json();
    expect(fresh.data).toEqual([
      { date: '2030-04-01', requests: 0 },
      // Four requests and the two usage requests made with it.
      { date: '2030-04-02', requests: 6 },
    ]);
  });

  it('keeps answering for a revoked key of the region', async () => {
    const other = await createKey(t, region.key);
    await me(t, other.key);
    expect(
      (
        await t.request({
          method: 'DELETE',
          url: `/auth/region/api-keys/${other.id}`,
          headers: { 'x-api-key': region.key },
        })
      ).statusCode,
    ).toBe(204);
    const res = await usage(t, region.key, other.id, '?days=1');
    expect(res.statusCode).toBe(200);
    // Its own request, and the creation and deletion were made with the region's first key.
    expect(res.json().data).toEqual([{ date: dayOf(clock.now()), requests: 1 }]);
  });

  it('answers 404 for a key of another region or no key at all, as DELETE does', async () => {
    const stranger = await newRegion(t, 'Another region');
    for (const id of [stranger.keyId, '00000000-0000-4000-8000-000000000000']) {
      const res = await usage(t, region.key, id);
      expectProblem(res, 404, 'not-found');
    }
  });

  it.each([
    ['id', 'not-a-uuid', ''],
    ['days', null, '?days=0'],
    ['days', null, '?days=91'],
    ['days', null, '?days=1.5'],
    ['days', null, '?days=ten'],
    ['days', null, '?days=1&days=2'],
    ['unexpected', null, '?unexpected=1'],
  ])('answers a bad %s (case %#) with a 400 problem', async (field, id, query) => {
    const res = await usage(t, region.key, id ?? region.keyId, query);
    const body = expectProblem(res, 400);
    if (field !== 'id') expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('says that a fractional days is not an integer, and nothing untrue about its range', async () => {
    const body = expectProblem(await usage(t, region.key, region.keyId, '?days=7.5'), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'days', message: 'days must be an integer number' }]);
  });

  it('keeps the counts of a flush that fails, logs a warning, and writes them with the next one', async () => {
    const repository = t.app.get(KeyUsageRepository);
    for (let i = 0; i < 4; i++) await me(t, region.key);
    const firstLog = t.logs.length;
    jest.spyOn(repository, 'addCounts').mockRejectedValueOnce(new Error('connection terminated unexpectedly'));
    await t.app.get(KeyUsageCounter).flush();
    expect(t.logs.slice(firstLog).join('\n')).toMatch(
      /Could not write the usage of \d+ API key-hours; kept for the next try/,
    );
    expect(await storedRows(t, region.keyId)).toEqual([]);
    await me(t, region.key);
    await t.app.get(KeyUsageCounter).flush();
    expect(await storedRows(t, region.keyId)).toEqual([{ day: dayOf(clock.now()), requests: 5 }]);
  });

  it('purges days older than the 90 kept, once a day', async () => {
    const at = (time: string) => jest.spyOn(clock, 'now').mockReturnValue(new Date(time));
    for (const day of ['2031-01-01', '2031-01-02']) {
      at(`${day}T12:00:00.000Z`);
      await me(t, region.key);
    }
    await t.app.get(KeyUsageCounter).flush();
    expect((await storedRows(t, region.keyId)).map((r) => r.day)).toEqual(['2031-01-01', '2031-01-02']);
    // 2031-04-01 is the 90th day from 2031-01-02 on: 01-01 goes, 01-02 stays.
    at('2031-04-01T00:00:01.000Z');
    await t.app.get(KeyUsageCounter).flush();
    expect((await storedRows(t, region.keyId)).map((r) => r.day)).toEqual(['2031-01-02']);
  });
});

describe('the usage flush timer', () => {
  it('writes the counts by itself at the configured interval', async () => {
    const t = await startTestApp({ API_KEY_USAGE_FLUSH_INTERVAL_MS: '200' });
    try {
      const region = await newRegion(t);
      await me(t, region.key);
      await me(t, region.key);
      const total = async () => (await storedRows(t, region.keyId)).reduce((sum, row) => sum + row.requests, 0);
      // Waits for the timer, however slow the machine: no assertion on how long it took. Summed
      // over days and flushes: the two requests may fall either side of one.
      while ((await total()) < 2) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await total()).toBe(2);
    } finally {
      await t.close();
    }
  });
});

/**
 * Two instances on one PostgreSQL server: the embedded database serves one process only, so
 * this part runs in the PostgreSQL pass (DATABASE_URL set).
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('per-key usage on two instances', () => {
  let apps: TwoApps;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    apps = await twoInstances();
    ({ a, b } = apps);
    for (const t of [a, b]) jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(new Date('2030-01-15T12:00:00.000Z'));
  });
  afterAll(async () => apps?.close());

  it("adds both instances' counts, each flushing in one statement", async () => {
    const region = await newRegion(a);
    const other = await createKey(b, region.key);
    await a.app.get(KeyUsageCounter).flush();
    await b.app.get(KeyUsageCounter).flush();
    const recordedA = recordStatements(a);
    const recordedB = recordStatements(b);
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => me(i % 2 ? a : b, region.key)),
      ...Array.from({ length: 10 }, (_, i) => me(i % 2 ? a : b, other.key)),
    ]);
    // Both at once: the two upserts meet on the same rows.
    await Promise.all([a.app.get(KeyUsageCounter).flush(), b.app.get(KeyUsageCounter).flush()]);
    recordedA.stop();
    recordedB.stop();
    expect(usageWrites(recordedA.statements)).toHaveLength(1);
    expect(usageWrites(recordedB.statements)).toHaveLength(1);
    const today = '2030-01-15';
    // And the request that created the other key, flushed before.
    expect(await storedRows(a, region.keyId)).toEqual([{ day: today, requests: 21 }]);
    expect(await storedRows(b, other.id)).toEqual([{ day: today, requests: 10 }]);
    // Either instance answers the sum (the usage requests count for the key that makes them).
    for (const t of [a, b]) {
      const res = await usage(t, region.key, other.id, '?days=1');
      expect(res.json().data).toEqual([{ date: today, requests: 10 }]);
    }
  });
});
