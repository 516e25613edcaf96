import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { Clock } from '../../src/common/clock/clock';
import { KeyUsageCounter, MAX_CLIENTS_PER_KEY } from '../../src/region-keys/key-usage/key-usage-counter';
import { type Answer, runWalkthrough, type SentRequest, walkthroughSteps } from '../support/curl-walkthrough';
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

/**
 * A rotation an administrator can verify: the calling key (/current), a key's clients
 * (/clients), its hourly usage (usage?granularity=hour), and roll events that link both keys.
 */

type Client = { address: string; userAgent: string | null; firstSeenAt: string; lastSeenAt: string; requests: number };

const get = (t: TestApp, key: string, url: string, headers: Record<string, string | undefined> = {}) =>
  t.request({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
const me = (t: TestApp, key: string, headers: Record<string, string | undefined> = {}, remoteAddress?: string) =>
  t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key, ...headers }, remoteAddress });
const clientsOf = async (t: TestApp, key: string, id: string): Promise<Client[]> => {
  const res = await get(t, key, `/auth/region/api-keys/${id}/clients`);
  expect(res.statusCode).toBe(200);
  return res.json<{ data: Client[] }>().data;
};
const hourly = (t: TestApp, key: string, id: string) =>
  get(t, key, `/auth/region/api-keys/${id}/usage?granularity=hour`);

async function storedClients(t: TestApp, apiKeyId: string): Promise<number> {
  const [{ n }] = await t.app
    .get(DataSource)
    .query('SELECT count(*)::int AS n FROM api_key_clients WHERE api_key_id = $1', [apiKeyId]);
  return n as number;
}

describe('rotation', () => {
  let t: TestApp;
  let region: RegionFixture;
  let clock: Clock;
  const at = (time: string | Date) => jest.spyOn(clock, 'now').mockReturnValue(new Date(time));
  const flush = () => t.app.get(KeyUsageCounter).flush();

  beforeAll(async () => {
    t = await startTestApp();
    clock = t.app.get(Clock);
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    jest.restoreAllMocks();
    at('2030-06-10T12:30:00.000Z');
    await flush();
    region = await newRegion(t);
  });

  describe('GET /auth/region/api-keys/current', () => {
    it('answers the calling key, whatever its permissions, with the ETag of GET /auth/region/api-keys/{id}', async () => {
      const byId = await get(t, region.key, `/auth/region/api-keys/${region.keyId}`);
      const current = await get(t, region.key, '/auth/region/api-keys/current');
      expect(current.statusCode).toBe(200);
      expect(current.json()).toEqual(byId.json());
      expect(current.headers.etag).toBe(byId.headers.etag);
      const notModified = await get(t, region.key, '/auth/region/api-keys/current', {
        'if-none-match': String(current.headers.etag),
      });
      expect(notModified.statusCode).toBe(304);

      for (const permissions of [['region:read'], ['keys:write']]) {
        const created = await t.request({
          method: 'POST',
          url: '/auth/region/api-keys',
          headers: { 'x-api-key': region.key },
          payload: { permissions },
        });
        const { id, key } = created.json<{ id: string; key: string }>();
        const res = await get(t, key, '/auth/region/api-keys/current');
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ id, permissions });
      }
    });

    it('is the static route, not a key id, and refuses what any key route refuses', async () => {
      expectProblem(await get(t, 'rk_not-a-key', '/auth/region/api-keys/current'), 401, 'unauthenticated');
      const missing = await t.request({ method: 'GET', url: '/auth/region/api-keys/current' });
      expectProblem(missing, 401, 'unauthenticated');
      const revoked = await createKey(t, region.key);
      await t.request({
        method: 'DELETE',
        url: `/auth/region/api-keys/${revoked.id}`,
        headers: { 'x-api-key': region.key },
      });
      expectProblem(await get(t, revoked.key, '/auth/region/api-keys/current'), 401, 'unauthenticated');
      const fenced = await t.request({
        method: 'POST',
        url: '/auth/region/api-keys',
        headers: { 'x-api-key': region.key },
        payload: { allowedCidrs: ['203.0.113.0/24'] },
      });
      expectProblem(
        await get(t, fenced.json<{ key: string }>().key, '/auth/region/api-keys/current'),
        403,
        'address-not-allowed',
      );
      // Another spelling is an id, and not a UUID.
      expectProblem(await get(t, region.key, '/auth/region/api-keys/CURRENT'), 400, 'validation');
      const post = await t.request({
        method: 'POST',
        url: '/auth/region/api-keys/current',
        headers: { 'x-api-key': region.key },
      });
      expect(post.statusCode).toBe(405);
    });
  });

  describe('GET /auth/region/api-keys/{id}/clients', () => {
    it('lists each address and user agent once, most recent first, counted in memory and written at the flush', async () => {
      at('2030-06-10T12:00:00.000Z');
      await me(t, region.key, { 'user-agent': 'timetable-sync/1.0' }, '203.0.113.7');
      await me(t, region.key, { 'user-agent': 'timetable-sync/1.0' }, '203.0.113.7');
      at('2030-06-10T12:05:00.000Z');
      await me(t, region.key, { 'user-agent': 'timetable-sync/1.0' }, '198.51.100.2');
      await flush();
      at('2030-06-10T12:10:00.000Z');
      await me(t, region.key, { 'user-agent': 'timetable-sync/1.0' }, '203.0.113.7');
      expect(await storedClients(t, region.keyId)).toBe(2);

      at('2030-06-10T12:20:00.000Z');
      const listed = await clientsOf(t, region.key, region.keyId);
      expect(listed).toEqual([
        // This request itself, sent by the test's own client.
        {
          address: '127.0.0.1',
          userAgent: 'lightMyRequest',
          firstSeenAt: '2030-06-10T12:20:00.000Z',
          lastSeenAt: '2030-06-10T12:20:00.000Z',
          requests: 1,
        },
        // Two written, one still in this instance's memory.
        {
          address: '203.0.113.7',
          userAgent: 'timetable-sync/1.0',
          firstSeenAt: '2030-06-10T12:00:00.000Z',
          lastSeenAt: '2030-06-10T12:10:00.000Z',
          requests: 3,
        },
        {
          address: '198.51.100.2',
          userAgent: 'timetable-sync/1.0',
          firstSeenAt: '2030-06-10T12:05:00.000Z',
          lastSeenAt: '2030-06-10T12:05:00.000Z',
          requests: 1,
        },
      ]);
    });

    it('cuts user agents at 200 characters, shows control characters as U+FFFD, and a missing one as null', async () => {
      const huge = 'Mozilla/5.0 '.repeat(2000);
      await me(t, region.key, { 'user-agent': huge });
      await me(t, region.key, { 'user-agent': '\u001b[31mred\u001b[0m\u0000' });
      await me(t, region.key, { 'user-agent': undefined });
      await me(t, region.key, { 'user-agent': '' });
      await me(t, region.key, { 'user-agent': `${'é'.repeat(199)}😀😀` });
      await flush();
      const agents = (await clientsOf(t, region.key, region.keyId)).map((c) => c.userAgent);
      expect(agents).toEqual(
        expect.arrayContaining([huge.slice(0, 200), '\uFFFD[31mred\uFFFD[0m\uFFFD', null, `${'é'.repeat(199)}😀`]),
      );
      expect(agents.filter((agent) => agent === null)).toHaveLength(1);
    });

    it('holds at most 100 new clients per key between flushes, keeps the 100 most recent, and says so', async () => {
      const firstLog = t.logs.length;
      for (let i = 0; i < MAX_CLIENTS_PER_KEY + 20; i++) await me(t, region.key, { 'user-agent': `rotating/${i}` });
      await flush();
      expect(t.logs.slice(firstLog).join('\n')).toMatch(/20 requests were not counted in API key clients/);
      expect(await storedClients(t, region.keyId)).toBe(MAX_CLIENTS_PER_KEY);
      at('2030-06-10T12:31:00.000Z');
      for (let i = 0; i < 10; i++) await me(t, region.key, { 'user-agent': `later/${i}` });
      await flush();
      expect(await storedClients(t, region.keyId)).toBe(MAX_CLIENTS_PER_KEY);
      const listed = await clientsOf(t, region.key, region.keyId);
      expect(listed).toHaveLength(MAX_CLIENTS_PER_KEY);
      // The ten latest, and this request itself, all of the same time.
      expect(listed.slice(0, 11).map((c) => c.userAgent)).toEqual(
        expect.arrayContaining(Array.from({ length: 10 }, (_, i) => `later/${i}`)),
      );
      // Usage counted every request all the same.
      const usage = await get(t, region.key, `/auth/region/api-keys/${region.keyId}/usage?days=1`);
      expect(usage.json().data[0].requests).toBe(MAX_CLIENTS_PER_KEY + 20 + 10 + 2);
    });

    it('forgets clients not seen for 30 days: not listed, and purged at the daily flush', async () => {
      at('2030-06-01T08:00:00.000Z');
      await me(t, region.key, { 'user-agent': 'old-deploy/1' });
      await flush();
      at('2030-07-01T08:00:01.000Z');
      const listed = await clientsOf(t, region.key, region.keyId);
      expect(listed.map((c) => c.userAgent)).not.toContain('old-deploy/1');
      await flush();
      const rows: { user_agent: string }[] = await t.app
        .get(DataSource)
        .query('SELECT user_agent FROM api_key_clients WHERE api_key_id = $1', [region.keyId]);
      expect(rows.map((r) => r.user_agent)).not.toContain('old-deploy/1');
    });

    it("answers for a revoked key of the region, and 404 for another region's key or none", async () => {
      const other = await createKey(t, region.key);
      await me(t, other.key, { 'user-agent': 'retired/1' });
      await t.request({
        method: 'DELETE',
        url: `/auth/region/api-keys/${other.id}`,
        headers: { 'x-api-key': region.key },
      });
      expect((await clientsOf(t, region.key, other.id)).map((c) => c.userAgent)).toEqual(['retired/1']);
      const stranger = await newRegion(t, 'Another region');
      await me(t, stranger.key);
      for (const id of [stranger.keyId, '00000000-0000-4000-8000-000000000000'])
        expectProblem(await get(t, region.key, `/auth/region/api-keys/${id}/clients`), 404, 'not-found');
      expectProblem(await get(t, region.key, '/auth/region/api-keys/not-a-uuid/clients'), 400, 'validation');
      const writeOnly = await t.request({
        method: 'POST',
        url: '/auth/region/api-keys',
        headers: { 'x-api-key': region.key },
        payload: { permissions: ['keys:write'] },
      });
      expectProblem(
        await get(t, writeOnly.json<{ key: string }>().key, `/auth/region/api-keys/${region.keyId}/clients`),
        403,
        'insufficient-permission',
      );
    });
  });

  describe('GET /auth/region/api-keys/{id}/usage?granularity=hour', () => {
    it('lists the 168 hours ending with the current one, oldest first, quiet hours as 0', async () => {
      at('2030-06-08T09:15:00.000Z');
      await me(t, region.key);
      at('2030-06-10T10:59:59.000Z');
      await me(t, region.key);
      await me(t, region.key);
      await flush();
      at('2030-06-10T12:00:00.000Z');
      await me(t, region.key); // not flushed: this instance's memory

      const res = await hourly(t, region.key, region.keyId);
      expect(res.statusCode).toBe(200);
      const data = res.json<{ data: { hour: string; requests: number }[] }>().data;
      expect(data).toHaveLength(168);
      expect(data[0].hour).toBe('2030-06-03T13:00:00Z');
      expect(data[167]).toEqual({ hour: '2030-06-10T12:00:00Z', requests: 2 });
      expect(data.find((b) => b.hour === '2030-06-08T09:00:00Z')?.requests).toBe(1);
      expect(data.find((b) => b.hour === '2030-06-10T10:00:00Z')?.requests).toBe(2);
      expect(data.find((b) => b.hour === '2030-06-10T11:00:00Z')?.requests).toBe(0);
      expect(data.reduce((sum, b) => sum + b.requests, 0)).toBe(5);
      // The daily figures are the hours' sums, and stay the default.
      const daily = await get(t, region.key, `/auth/region/api-keys/${region.keyId}/usage?days=3`);
      expect(daily.json()).toEqual({
        data: [
          { date: '2030-06-08', requests: 1 },
          { date: '2030-06-09', requests: 0 },
          { date: '2030-06-10', requests: 5 },
        ],
      });
      expect((await get(t, region.key, `/auth/region/api-keys/${region.keyId}/usage`)).json().data).toHaveLength(30);
    });

    it('purges hours older than a week before today, keeping every hour it lists', async () => {
      at('2030-06-02T23:00:00.000Z');
      await me(t, region.key);
      at('2030-06-03T00:30:00.000Z');
      await me(t, region.key);
      await flush();
      at('2030-06-10T00:00:01.000Z');
      await flush();
      const rows: { hour: Date }[] = await t.app
        .get(DataSource)
        .query('SELECT hour FROM api_key_hourly_usage WHERE api_key_id = $1 ORDER BY hour', [region.keyId]);
      expect(rows.map((r) => new Date(r.hour).toISOString())).toEqual(['2030-06-03T00:00:00.000Z']);
      // Daily usage is kept 90 days: the day of the purged hour still counts it.
      const daily = await get(t, region.key, `/auth/region/api-keys/${region.keyId}/usage?days=9`);
      expect(daily.json().data[0]).toEqual({ date: '2030-06-02', requests: 1 });
    });

    it.each([
      ['granularity', '?granularity=minute'],
      ['granularity', '?granularity=HOUR'],
      ['granularity', '?granularity='],
      ['granularity', '?granularity=hour&granularity=day'],
      ['granularity', `?granularity=${'\u001b[31m'}`],
      ['days', '?granularity=hour&days=7'],
    ])('answers a bad %s (%s) with a 400 problem naming it', async (field, query) => {
      const res = await get(t, region.key, `/auth/region/api-keys/${region.keyId}/usage${encodeURI(query)}`);
      const body = expectProblem(res, 400, 'validation');
      expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it("answers 404 for another region's key", async () => {
      const stranger = await newRegion(t, 'Another region');
      expectProblem(await hourly(t, region.key, stranger.keyId), 404, 'not-found');
    });
  });

  describe('roll events', () => {
    it("link the old key's api_key.rolled to its replacement and the new key's api_key.created to the old key", async () => {
      const rolled = await t.request({
        method: 'POST',
        url: `/auth/region/api-keys/${region.keyId}/roll`,
        headers: { 'x-api-key': region.key },
        payload: { revokeOldAfterSeconds: 3600 },
      });
      expect(rolled.statusCode).toBe(201);
      const fresh = rolled.json<{ id: string; key: string; tokenPreview: string }>();
      // Until it stops, the old key still answers as itself, with the time it stops.
      const asOld = await get(t, region.key, '/auth/region/api-keys/current');
      expect(asOld.json()).toMatchObject({ id: region.keyId, revokesAt: '2030-06-10T13:30:00.000Z' });
      const events = (await get(t, fresh.key, '/auth/region/events?limit=2')).json().data;
      const [created, rolledEvent] = events;
      expect(created).toMatchObject({
        type: 'api_key.created',
        apiKey: { id: fresh.id, replaces: { id: region.keyId } },
      });
      expect(created.apiKey.replacedBy).toBeUndefined();
      expect(rolledEvent).toMatchObject({
        type: 'api_key.rolled',
        apiKey: { id: region.keyId, replacedBy: { id: fresh.id, tokenPreview: fresh.tokenPreview } },
      });
      expect(rolledEvent.apiKey.replaces).toBeUndefined();
      // A plain create replaces nothing.
      await createKey(t, fresh.key);
      const [plain] = (await get(t, fresh.key, '/auth/region/events?limit=1')).json().data;
      expect(plain.type).toBe('api_key.created');
      expect(plain.apiKey.replaces).toBeUndefined();
      // What the already-rolled problem tells to do can be done: the replacement is in the events.
      const again = await t.request({
        method: 'POST',
        url: `/auth/region/api-keys/${region.keyId}/roll`,
        headers: { 'x-api-key': fresh.key },
        payload: {},
      });
      expectProblem(again, 409, 'api-key-already-rolled');
      const page = await t.request({ method: 'GET', url: '/problems/api-key-already-rolled' });
      expect(page.body).toContain('replacedBy.id');
    });
  });

  describe("the API docs' rotation, run as written", () => {
    const steps = walkthroughSteps('docs/api.md', '### Rotating a key: roll, verify, delete');

    /** Runs the docs' commands; the integration sends `during` with the key it holds at each sleep. */
    async function rotate(straggler: boolean) {
      let now = new Date('2030-06-10T12:30:00.000Z').getTime();
      jest.spyOn(clock, 'now').mockImplementation(() => new Date(now));
      const region = await newRegion(t);
      // The integration the key is for, before the rotation.
      const integration = { 'user-agent': 'timetable-sync/2.4' };
      for (let i = 0; i < 5; i++) await me(t, region.key, integration, '203.0.113.7');
      await t.app.get(KeyUsageCounter).flush();
      let newKey: string | undefined;
      const send = async ({ method, url, headers, payload }: SentRequest): Promise<Answer> => {
        const res = await t.request({ method: method, url, headers, payload });
        if (url.endsWith('/roll')) newKey = res.json<{ key: string }>().key;
        return { statusCode: res.statusCode, body: res.body };
      };
      const results = await runWalkthrough(steps, {
        vars: { KEY: region.key },
        send,
        sleep: async (seconds) => {
          // The hour waited: the deployment sends the new key, a forgotten one the old key.
          for (let i = 0; i < 3; i++) await me(t, newKey!, integration, '203.0.113.7');
          if (straggler) await me(t, region.key, { 'user-agent': 'forgotten-cron/1' }, '198.51.100.4');
          now += seconds * 1000;
          await t.app.get(KeyUsageCounter).flush();
        },
      });
      return { region, results, newKey: newKey! };
    }

    const usageReads = (results: Awaited<ReturnType<typeof rotate>>['results']) =>
      results
        .filter((r) => r.request.url.includes('/usage?granularity=hour'))
        .map((r) =>
          JSON.parse(r.answer.body).data.reduce((sum: number, b: { requests: number }) => sum + b.requests, 0),
        );

    it('rolls, checks the deployed key, sees the old key quiet between two reads, and deletes it', async () => {
      const { region, results, newKey } = await rotate(false);
      expect(results.map((r) => `${r.request.method} ${r.answer.statusCode}`)).toEqual([
        'GET 200',
        'POST 201',
        'GET 200',
        'GET 200',
        'GET 200',
        'GET 200',
        'DELETE 204',
      ]);
      const current = JSON.parse(results[2].answer.body);
      expect(current.id).not.toBe(region.keyId);
      expect(JSON.parse(results[1].answer.body)).toMatchObject({ id: current.id, replaces: { id: region.keyId } });
      const clients = JSON.parse(results[3].answer.body).data;
      expect(clients.find((c: { userAgent: string }) => c.userAgent === 'timetable-sync/2.4')?.requests).toBe(5);
      // Five by the integration, the /current and the roll sent with the old key.
      expect(usageReads(results)).toEqual([7, 7]);
      expectProblem(await get(t, region.key, '/auth/region/api-keys/current'), 401, 'unauthenticated');
      expect((await get(t, newKey, '/auth/region/api-keys/current')).statusCode).toBe(200);
    });

    it('shows the count growing between the two reads while something still sends the old key', async () => {
      const { results } = await rotate(true);
      const [before, after] = usageReads(results);
      expect(after).toBe(before + 1);
    });
  });
});

/**
 * Two instances on one PostgreSQL server: the embedded database serves one process only, so
 * this part runs in the PostgreSQL pass (DATABASE_URL set).
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('clients and hourly usage on two instances', () => {
  let apps: TwoApps;

  beforeAll(async () => {
    apps = await twoInstances();
    for (const t of [apps.a, apps.b])
      jest.spyOn(t.app.get(Clock), 'now').mockReturnValue(new Date('2030-06-10T12:30:00.000Z'));
  });
  afterAll(async () => apps?.close());

  it("adds both instances' clients and hours, whichever flushes first, and either answers the sum", async () => {
    const { a, b } = apps;
    const region = await newRegion(a);
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        me(i % 2 ? a : b, region.key, { 'user-agent': 'shared/1' }, '203.0.113.7'),
      ),
      me(b, region.key, { 'user-agent': 'only-b/1' }, '198.51.100.9'),
    ]);
    await Promise.all([a.app.get(KeyUsageCounter).flush(), b.app.get(KeyUsageCounter).flush()]);
    for (const t of [a, b]) {
      const clients = await clientsOf(t, region.key, region.keyId);
      expect(clients.find((c) => c.userAgent === 'shared/1')?.requests).toBe(6);
      expect(clients.find((c) => c.userAgent === 'only-b/1')?.requests).toBe(1);
      const hours = (await hourly(t, region.key, region.keyId)).json().data;
      // Seven requests, and the reads each instance has made with the key so far.
      expect(hours[167].hour).toBe('2030-06-10T12:00:00Z');
      expect(hours[167].requests).toBeGreaterThanOrEqual(7);
    }
    const hoursAfter = async () => {
      await Promise.all([a.app.get(KeyUsageCounter).flush(), b.app.get(KeyUsageCounter).flush()]);
      return (await hourly(a, region.key, region.keyId)).json().data[167].requests as number;
    };
    // Four reads made above (two clients and two hourly on each), and this one.
    expect(await hoursAfter()).toBe(7 + 4 + 1);
  });
});
