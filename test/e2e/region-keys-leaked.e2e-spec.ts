import { type AddressInfo, createServer, type Socket } from 'node:net';

import { jest } from '@jest/globals';
import type { Response } from 'light-my-request';
import { DataSource } from 'typeorm';

import { SecurityCounters } from '../../src/common/metrics/security-counters';
import { generateApiKey, hashApiKey } from '../../src/region-keys/api-key-codec';
import { RegionKeysRepository } from '../../src/region-keys/region-keys.repository';
import { runCliInProcess } from '../support/cli';
import { expectProblem } from '../support/problems';
import { type TwoInstances, twoInstancesSharingRedis } from '../support/redis';
import {
  createKey,
  newRegion,
  type RegionFixture,
  startTestApp,
  type TestApp,
  type TwoApps,
  twoInstances,
} from '../support/test-app';
import { createPersistentTestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * POST /auth/region/api-keys/leaked (docs/api.md, "Reporting a leaked key"): anyone reports
 * keys, each active one of this environment is revoked before the answer (the region's last
 * managing key flagged instead), and the answer says nothing of which were real.
 */
const LEAKED_URL = '/auth/region/api-keys/leaked';
const LIMIT = 4;
// Small, so that the suite is quick; the floor's effect is shown by the service's unit test.
const FLOOR_MS = 20;

let t: TestApp;
let sandbox: TestApp;
beforeAll(async () => {
  const env = { LEAK_REPORT_RATE_LIMIT: String(LIMIT), LEAK_REPORT_MIN_ANSWER_MS: String(FLOOR_MS) };
  t = await startTestApp(env);
  // Unset, as an operator's sandbox has it.
  sandbox = await startTestApp({ ...env, API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: '' });
});
afterAll(async () => Promise.all([t?.close(), sandbox?.close()]));
afterEach(() => jest.restoreAllMocks());

// Each test reports from addresses of its own: the limit counts per client address.
let nextAddress = 0;
const newAddress = () => `198.51.100.${++nextAddress}`;

const report = (app: TestApp, payload: unknown, remoteAddress = newAddress(), headers: Record<string, string> = {}) =>
  app.request({ method: 'POST', url: LEAKED_URL, payload: payload as string, remoteAddress, headers });

const me = (app: TestApp, key: string) =>
  app.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key } });

const eventsOf = async (app: TestApp, key: string) =>
  (await app.request({ method: 'GET', url: '/auth/region/events', headers: { 'x-api-key': key } })).json().data as {
    type: string;
    actor: { type: string };
    apiKey: { id: string };
    clientAddress: string | null;
    requestId: string | null;
  }[];

/** A region with a managing key to spare: the first key, and a second one holding both permissions. */
async function regionWithTwoManagers(app: TestApp) {
  const region = await newRegion(app);
  const second = await createKey(app, region.key, 'second manager');
  return { ...region, second };
}

describe('a report', () => {
  it('is answered 202 { received: n }, n the strings received, with the limit headers', async () => {
    const res = await report(t, { keys: [generateApiKey(), 'not a key', 'not a key'] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ received: 3 });
    expect(res.headers['ratelimit-policy']).toBe(`"leak-reports";q=${LIMIT};w=3600`);
    expect(res.headers.ratelimit).toBe(`"leak-reports";r=${LIMIT - 1};t=3600`);
  });

  it('revokes each active key reported at once, recording api_key.leak_reported and api_key.revoked by the reporter', async () => {
    const region = await regionWithTwoManagers(t);
    const reader = await createKey(t, region.key, 'reader');
    const address = newAddress();
    const res = await report(t, { keys: [reader.key, region.second.key] }, address);
    expect(res.statusCode).toBe(202);
    for (const key of [reader.key, region.second.key]) expectProblem(await me(t, key), 401, 'unauthenticated');
    expect((await me(t, region.key)).json().apiKeys.map((k: { id: string }) => k.id)).toEqual([region.keyId]);

    const events = await eventsOf(t, region.key);
    const byReport = events.filter((event) => event.actor.type === 'reporter');
    expect(byReport).toHaveLength(4);
    for (const id of [reader.id, region.second.id]) {
      const ofKey = byReport.filter((event) => event.apiKey.id === id).map((event) => event.type);
      expect(ofKey.sort()).toEqual(['api_key.leak_reported', 'api_key.revoked']);
    }
    for (const event of byReport)
      expect(event).toMatchObject({
        actor: { type: 'reporter' },
        clientAddress: address,
        requestId: expect.any(String),
      });
  });

  it('revokes a rolled key that still works at once, as any active key', async () => {
    const region = await newRegion(t);
    const rolled = await t.request({
      method: 'POST',
      url: `/auth/region/api-keys/${region.keyId}/roll`,
      headers: { 'x-api-key': region.key },
      payload: { revokeOldAfterSeconds: 3600 },
    });
    expect(rolled.statusCode).toBe(201);
    expect((await report(t, { keys: [region.key] })).statusCode).toBe(202);
    expectProblem(await me(t, region.key), 401, 'unauthenticated');
    expect((await me(t, rolled.json().key)).statusCode).toBe(200);
  });

  it('records a key reported twice once: the second report finds it revoked, and is answered the same', async () => {
    const region = await regionWithTwoManagers(t);
    const first = await report(t, { keys: [region.second.key] });
    const again = await report(t, { keys: [region.second.key] });
    expect([first.statusCode, again.statusCode]).toEqual([202, 202]);
    expect(again.json()).toEqual(first.json());
    const reported = (await eventsOf(t, region.key)).filter((event) => event.type === 'api_key.leak_reported');
    expect(reported).toHaveLength(1);
  });
});

describe('the last managing key', () => {
  it('is flagged (leakReportedAt), not revoked, with the event, a warning line and the metric', async () => {
    const region = await newRegion(t);
    const counted = jest.spyOn(t.app.get(SecurityCounters), 'leakedKeyReported');
    const address = newAddress();
    const before = new Date();
    expect((await report(t, { keys: [region.key] }, address)).statusCode).toBe(202);

    const res = await me(t, region.key);
    expect(res.statusCode).toBe(200);
    const [key] = res.json().apiKeys;
    expect(new Date(key.leakReportedAt).getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    const [event] = await eventsOf(t, region.key);
    expect(event).toMatchObject({
      type: 'api_key.leak_reported',
      actor: { type: 'reporter' },
      apiKey: { id: region.keyId },
      clientAddress: address,
    });
    expect((await eventsOf(t, region.key)).some((e) => e.type === 'api_key.revoked')).toBe(false);
    expect(counted.mock.calls).toEqual([['flagged']]);

    // Nest's Logger writes to the logger of the app started last in the process: either app's lines.
    const logs = [...t.logs, ...sandbox.logs];
    const warnings = logs.filter((line) => line.includes(region.keyId) && /"level":40/.test(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(region.regionId);
    const secrets = [region.key, hashApiKey(region.key)];
    for (const line of logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });

  it('keeps the first report time when reported again, and shows it on GET of the key', async () => {
    const region = await newRegion(t);
    await report(t, { keys: [region.key] });
    const first = (await me(t, region.key)).json().apiKeys[0].leakReportedAt;
    await report(t, { keys: [region.key] });
    const res = await t.request({
      method: 'GET',
      url: `/auth/region/api-keys/${region.keyId}`,
      headers: { 'x-api-key': region.key },
    });
    expect(res.json().leakReportedAt).toBe(first);
  });

  it('of two managers reported together, one is revoked and the other kept and flagged', async () => {
    const region = await regionWithTwoManagers(t);
    const counted = jest.spyOn(t.app.get(SecurityCounters), 'leakedKeyReported');
    expect((await report(t, { keys: [region.key, region.second.key] })).statusCode).toBe(202);
    const statuses = [(await me(t, region.key)).statusCode, (await me(t, region.second.key)).statusCode];
    expect([...statuses].sort()).toEqual([200, 401]);
    const survivor = statuses[0] === 200 ? region.key : region.second.key;
    const keys = (await me(t, survivor)).json().apiKeys;
    expect(keys).toHaveLength(1);
    expect(keys[0].leakReportedAt).toEqual(expect.any(String));
    expect(counted.mock.calls.map(([outcome]) => outcome).sort()).toEqual(['flagged', 'revoked']);
  });
});

describe('environments', () => {
  it('revokes sandbox keys on a sandbox', async () => {
    const region = await regionWithTwoManagers(sandbox);
    expect(region.second.key).toMatch(/^rk_test_/);
    expect((await report(sandbox, { keys: [region.second.key] })).statusCode).toBe(202);
    expectProblem(await me(sandbox, region.second.key), 401, 'unauthenticated');
  });

  it('ignores a key of the other environment, even one the database would find', async () => {
    const region = await regionWithTwoManagers(t);
    // A sandbox key never reaches a live database; were one there, a report of it still does nothing.
    const sandboxKey = generateApiKey('sandbox');
    await t.app
      .get(DataSource)
      .query('UPDATE api_keys SET token_hash = $2 WHERE id = $1', [region.second.id, hashApiKey(sandboxKey)]);
    expect((await report(t, { keys: [sandboxKey] })).statusCode).toBe(202);
    const [{ revoked }] = await t.app
      .get(DataSource)
      .query('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1', [region.second.id]);
    expect(revoked).toBe(false);
  });
});

describe('no oracle', () => {
  /** The answer as a reporter sees it, but for what differs by request and not by keys. */
  const seen = (res: Response) => {
    const { date: _date, 'x-request-id': _id, ...headers } = res.headers;
    return { status: res.statusCode, headers, body: res.body };
  };

  it('answers a batch holding a real key exactly as a batch of unknown keys, after one lookup each', async () => {
    const region = await regionWithTwoManagers(t);
    // Same shape: two well-formed keys (never issued, or real) and one string that is no key.
    const unknown = [generateApiKey(), generateApiKey(), 'rk_not-a-key'];
    const withReal = [generateApiKey(), region.second.key, 'rk_not-a-key'];
    // The timing, by design: the strings are hashed and looked up in one query whatever they are,
    // and the revocation a real key adds ends before the floor (LEAK_REPORT_MIN_ANSWER_MS) every
    // answer waits for, which test/unit/leaked-keys.service.spec.ts shows. Here: one lookup each,
    // of as many hashes.
    const lookups = jest.spyOn(t.app.get(RegionKeysRepository), 'findActiveKeysByHashes');
    const a = await report(t, { keys: unknown });
    const b = await report(t, { keys: withReal });
    expect(seen(b)).toEqual(seen(a));
    expect(a.statusCode).toBe(202);
    expect(lookups.mock.calls.map(([hashes]) => hashes.length)).toEqual([2, 2]);
    expectProblem(await me(t, region.second.key), 401, 'unauthenticated');
  });

  it('answers a batch with a key of another region, or the last managing key, as any other', async () => {
    const other = await newRegion(t);
    const mine = await regionWithTwoManagers(t);
    const answers = [
      await report(t, { keys: [other.key] }),
      await report(t, { keys: [mine.second.key] }),
      await report(t, { keys: [generateApiKey('sandbox')] }),
      await report(t, { keys: ['x'] }),
    ].map(seen);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });
});

describe('credentials', () => {
  it('refuses a request carrying X-API-Key or Authorization with a 400, and revokes nothing', async () => {
    const region = await regionWithTwoManagers(t);
    const keys = { keys: [region.second.key] };
    const sent: Record<string, string>[] = [
      { 'x-api-key': region.key },
      { 'x-api-key': region.second.key },
      { 'x-api-key': '' },
      { authorization: 'Bearer abc' },
      { authorization: `Basic ${Buffer.from('a@example.com:password').toString('base64')}` },
    ];
    for (const headers of sent) {
      const res = await report(t, keys, newAddress(), headers);
      expectProblem(res, 400, 'credentials-not-accepted');
      expect(res.headers['ratelimit-policy']).toBeDefined();
    }
    expect((await me(t, region.second.key)).statusCode).toBe(200);
  });
});

describe('the limit per client address', () => {
  it('counts every request, whatever its answer, then answers 429 with Retry-After; other addresses go on', async () => {
    const address = newAddress();
    const answers = [
      await report(t, { keys: ['a'] }, address),
      await report(t, { keys: [] }, address),
      await report(t, { keys: ['a'] }, address, { 'x-api-key': 'rk_x' }),
      await report(t, { keys: ['a'] }, address),
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([202, 400, 400, 202]);
    expect(answers.map((res) => res.headers['x-ratelimit-remaining'])).toEqual(['3', '2', '1', '0']);
    const refused = await report(t, { keys: ['a'] }, address);
    expectProblem(refused, 429, 'too-many-requests');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers.ratelimit).toMatch(/^"leak-reports";r=0;t=\d+$/);
    expect((await report(t, { keys: ['a'] })).statusCode).toBe(202);
  });

  it('counts an IPv6 client by its /64', async () => {
    const inNetwork = (i: number) => `2001:db8:77:1::${i}`;
    for (let i = 1; i <= LIMIT; i++) expect((await report(t, { keys: ['a'] }, inNetwork(i))).statusCode).toBe(202);
    expectProblem(await report(t, { keys: ['a'] }, inNetwork(99)), 429, 'too-many-requests');
  });
});

describe('with REDIS_URL: two instances share one limit', () => {
  let instances: TwoInstances;
  beforeAll(async () => {
    instances = await twoInstancesSharingRedis({ LEAK_REPORT_RATE_LIMIT: '3' });
  });
  afterAll(async () => instances?.close());

  it('counts the reports of one address on either instance against one limit', async () => {
    const { a, b } = instances;
    const address = newAddress();
    const remaining = [];
    for (const app of [a, b, a])
      remaining.push((await report(app, { keys: ['a'] }, address)).headers['x-ratelimit-remaining']);
    expect(remaining).toEqual(['2', '1', '0']);
    expectProblem(await report(b, { keys: ['a'] }, address), 429, 'too-many-requests');
  });
});

describe('hostile bodies', () => {
  const bad = (payload: string, contentType = 'application/json') =>
    t.request({
      method: 'POST',
      url: LEAKED_URL,
      payload,
      remoteAddress: newAddress(),
      headers: { 'content-type': contentType },
    });

  it('answers each malformed body with a 400 problem naming keys, and revokes nothing', async () => {
    const region = await regionWithTwoManagers(t);
    const key = region.second.key;
    for (const body of [
      {},
      { keys: key },
      { keys: { 0: key } },
      { keys: 42 },
      { keys: null },
      { keys: [] },
      { keys: Array.from({ length: 101 }, () => key) },
      { keys: [key, 'x'.repeat(257)] },
      { keys: [key, ''] },
      { keys: [key, 42] },
      { keys: [key, null] },
      { keys: [[key]] },
      { keys: [{ key }] },
      { keys: [key], extra: true },
    ]) {
      const res = await bad(JSON.stringify(body));
      expectProblem(res, 400, 'validation');
      expect(res.json().errors.map((e: { field: string }) => e.field.replace(/[.[].*$/, ''))).toEqual(
        expect.arrayContaining([Object.keys(body).length === 0 ? 'keys' : Object.keys(body).at(-1)]),
      );
    }
    expect((await me(t, key)).statusCode).toBe(200);
  });

  it('answers JSON that is not an object, broken JSON, a body too large and other content types with a problem', async () => {
    const region = await regionWithTwoManagers(t);
    const key = region.second.key;
    expectProblem(await bad(JSON.stringify([key])), 400);
    expectProblem(await bad('"keys"'), 400);
    expectProblem(await bad(`{"keys":["${key}"`), 400);
    expectProblem(await bad(''), 400);
    expectProblem(await bad(JSON.stringify({ keys: ['x'.repeat(70_000)] })), 413);
    expectProblem(await bad(`keys=${key}`, 'application/x-www-form-urlencoded'), 415);
    expectProblem(await bad(key, 'text/plain'), 415);
    expect((await me(t, key)).statusCode).toBe(200);
  });

  it('takes 100 keys, each of up to 256 characters', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(256, 'k'));
    const res = await report(t, { keys });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ received: 100 });
  });
});

describe('the operator CLI', () => {
  it('lists the active keys reported as leaked and kept working, of every region, and no other', async () => {
    const database = await createPersistentTestDatabase();
    try {
      // The embedded database takes one process at a time: the app is closed before the CLI runs.
      const app = await startTestApp({}, database);
      let kept: RegionFixture;
      try {
        kept = await newRegion(app);
        const other = await regionWithTwoManagers(app);
        expect((await report(app, { keys: [kept.key, other.second.key] })).statusCode).toBe(202);
      } finally {
        await app.close();
      }
      // With REDIS_URL set, as an operator's .env has it: the CLI serves no route, so it counts no limit.
      const connections: Socket[] = [];
      const redis = createServer((socket) => connections.push(socket.destroy()));
      await new Promise<void>((listening) => redis.listen(0, '127.0.0.1', listening));
      const redisUrl = `redis://127.0.0.1:${(redis.address() as AddressInfo).port}`;
      const res = await runCliInProcess(['key', 'leaked', '--json'], {
        NODE_ENV: 'test',
        ...database.env,
        REDIS_URL: redisUrl,
      }).finally(() => redis.close());
      expect({ code: res.code, stderr: res.stderr, redisConnections: connections.length }).toEqual({
        code: 0,
        stderr: '',
        redisConnections: 0,
      });
      expect(JSON.parse(res.stdout)).toEqual({
        keys: [
          {
            regionId: kept.regionId,
            id: kept.keyId,
            tokenPreview: `${kept.key.slice(0, 8)}\u2026${kept.key.slice(-4)}`,
            description: 'first key',
            leakReportedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          },
        ],
      });
    } finally {
      await database.drop();
    }
  });
});

/**
 * Two server instances on one PostgreSQL server: the embedded database serves one process
 * only, so this part runs in the PostgreSQL pass (DATABASE_URL set).
 */
const describeOnServer = usesPostgresServer() ? describe : describe.skip;

describeOnServer('on two instances sharing the database', () => {
  let apps: TwoApps;
  beforeAll(async () => {
    apps = await twoInstances({ LEAK_REPORT_MIN_ANSWER_MS: '0' });
  });
  afterAll(async () => apps?.close());

  it('a key reported on either instance gets 401 on both right after the 202', async () => {
    const { a, b } = apps;
    const region = await regionWithTwoManagers(a);
    const reader = await createKey(b, region.key, 'reader');
    // Both instances have just accepted both keys: nothing they hold may keep one working.
    for (const app of [a, b])
      for (const key of [reader.key, region.second.key]) expect((await me(app, key)).statusCode).toBe(200);
    expect((await report(a, { keys: [reader.key] })).statusCode).toBe(202);
    for (const app of [a, b]) expectProblem(await me(app, reader.key), 401, 'unauthenticated');
    expect((await report(b, { keys: [region.second.key] })).statusCode).toBe(202);
    for (const app of [a, b]) expectProblem(await me(app, region.second.key), 401, 'unauthenticated');
  });

  it('keeps one managing key when every key of a region is reported at once through both instances', async () => {
    const { a, b } = apps;
    const region = await newRegion(a);
    const keys = [region.key];
    for (let i = 1; i < 8; i++) keys.push((await createKey(i % 2 ? a : b, region.key)).key);
    const answers = await Promise.all(keys.map((key, i) => report(i % 2 ? a : b, { keys: [key] })));
    expect(answers.map((res) => res.statusCode)).toEqual(keys.map(() => 202));
    const working = [];
    for (const key of keys) if ((await me(a, key)).statusCode === 200) working.push(key);
    expect(working).toHaveLength(1);
    expect((await me(b, working[0])).json().apiKeys[0].leakReportedAt).toEqual(expect.any(String));
  });
});
