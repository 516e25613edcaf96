import { randomUUID } from 'node:crypto';

import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';

import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { expectExampleAnswer } from '../support/problem-examples';
import { expectProblem } from '../support/problems';
import { newRegion, type RegionFixture, startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';
import { fixture, multipart } from './planets-support';

/** Idempotency-Key on the POSTs that create: replays, 409, 422, and the answer lost after a commit. */
let t: TestApp;
let region: RegionFixture;
let user: UserFixture;

beforeAll(async () => {
  t = await startTestApp();
  user = await newUser(t);
});
afterAll(async () => t?.close());
beforeEach(async () => {
  region = await newRegion(t);
});
afterEach(() => jest.restoreAllMocks());

const createKey = (idempotencyKey: string | undefined, payload: object = { description: 'ci' }) =>
  t.request({
    method: 'POST',
    url: '/auth/region/api-keys',
    headers: {
      'x-api-key': region.key,
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    },
    payload,
  });

const createKeyAs = (apiKey: string, idempotencyKey: string, payload: object) =>
  t.request({
    method: 'POST',
    url: '/auth/region/api-keys',
    headers: { 'x-api-key': apiKey, 'idempotency-key': idempotencyKey },
    payload,
  });

const activeKeys = async () =>
  (await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } })).json<{
    apiKeys: unknown[];
  }>().apiKeys.length;

describe('a key create with an Idempotency-Key', () => {
  it('replays the first answer (secret, Location, no-store) and creates one key', async () => {
    const key = randomUUID();
    const first = await createKey(`"${key}"`);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The bare token (Stripe's form) names the same key as the sf-string.
    const again = await createKey(key, { description: 'ci' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['cache-control']).toBe('no-store');
    expect(await activeKeys()).toBe(2);
  });

  it('keeps neither the key nor the secret readable in the database', async () => {
    const key = randomUUID();
    const secret = (await createKey(key)).json<{ key: string }>().key;
    const rows: { key_hash: Buffer; answer: Buffer }[] = await t.app
      .get(DataSource)
      .query('SELECT key_hash, answer FROM idempotency_keys');
    const dump = Buffer.concat(rows.flatMap((r) => [r.key_hash, r.answer ?? Buffer.alloc(0)]));
    expect(rows.some((r) => r.answer !== null)).toBe(true);
    expect(dump.includes(secret)).toBe(false);
    expect(dump.includes(secret.slice(3, 20))).toBe(false);
    expect(dump.includes(key)).toBe(false);
  });

  it('answers 422 to the same key with another body, and creates nothing', async () => {
    const key = randomUUID();
    expect((await createKey(key, { description: 'one' })).statusCode).toBe(201);
    expectProblem(await createKey(key, { description: 'two' }), 422, 'idempotency-key-reused');
    expect(await activeKeys()).toBe(2);
  });

  it('takes the body with its fields in any order as the same request', async () => {
    const key = randomUUID();
    expect((await createKey(key, { description: 'x', permissions: ['region:read'] })).statusCode).toBe(201);
    const again = await createKey(key, { permissions: ['region:read'], description: 'x' });
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('runs concurrent duplicates once: the others replay or are told it is in progress', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => createKey(key)));
    const fresh = answers.filter((r) => r.statusCode === 201 && !r.headers['idempotent-replayed']);
    expect(fresh).toHaveLength(1);
    for (const res of answers.filter((r) => r.statusCode !== 201)) {
      expectProblem(res, 409, 'idempotent-request-in-progress');
      expectExampleAnswer(res.json(), 'POST /auth/region/api-keys 409 idempotent-request-in-progress');
      // A create takes milliseconds: a second, not the minute the claim's lease may last.
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(await activeKeys()).toBe(2);
  });

  it('never creates again when the create committed but its answer was lost', async () => {
    jest.spyOn(t.app.get(IdempotencyRepository), 'storeAnswer').mockRejectedValueOnce(new Error('connection lost'));
    const key = randomUUID();
    expect((await createKey(key)).statusCode).toBe(201);
    // Until its lease ends, the instance that committed may still keep its answer.
    expectProblem(await createKey(key), 409, 'idempotent-request-in-progress');
    // As when that instance died: its lease runs out.
    await t.app.get(DataSource).query('UPDATE idempotency_keys SET lease_until = now() WHERE answer IS NULL');
    const lost = await createKey(key);
    expectProblem(lost, 409, 'idempotent-answer-lost');
    expectExampleAnswer(lost.json(), 'POST /auth/region/api-keys 409 idempotent-answer-lost');
    expect(await activeKeys()).toBe(2);
  });

  it('releases the key when the work failed before committing, so a retry runs again', async () => {
    const key = randomUUID();
    const roll = () =>
      t.request({
        method: 'POST',
        url: `/auth/region/api-keys/${randomUUIDFor(key)}/roll`,
        headers: { 'x-api-key': region.key, 'idempotency-key': key },
        payload: {},
      });
    expectProblem(await roll(), 404, 'not-found');
    expectProblem(await roll(), 404, 'not-found');
  });

  it("never replays to a key of the region that could not have made the request: the scope holds the caller's permissions", async () => {
    const key = randomUUID();
    const body = { description: 'read-only', permissions: ['region:read'] };
    const first = await createKey(key, body);
    expect(first.statusCode).toBe(201);
    const writeOnly = (await createKey(undefined, { description: 'write only', permissions: ['keys:write'] })).json<{
      key: string;
    }>().key;
    // It may not grant region:read: refused as without the header, never handed the first key's secret.
    const refused = await createKeyAs(writeOnly, key, body);
    expectProblem(refused, 403, 'insufficient-permission');
    expect(refused.body).not.toContain(first.json<{ key: string }>().key);
  });

  it('replays only to the key that made the request: the same Idempotency-Key from another key is another request', async () => {
    // As when two administrators press "Try it out" with the same key in the header.
    const key = randomUUID();
    const body = { description: 'ci' };
    const first = await createKey(key, body);
    expect(first.statusCode).toBe(201);
    const twin = (await createKey(undefined, { description: 'twin' })).json<{ key: string }>().key;
    const other = await createKeyAs(twin, key, body);
    expect(other.statusCode).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.json<{ id: string }>().id).not.toBe(first.json<{ id: string }>().id);
    expect(other.body).not.toContain(first.json<{ key: string }>().key);
    // Each key replays its own.
    expect((await createKeyAs(twin, key, body)).json()).toEqual(other.json());
    expect((await createKey(key, body)).json()).toEqual(first.json());
    expect(await activeKeys()).toBe(4);
  });

  it('is scoped to the caller: another region may use the same key', async () => {
    const key = randomUUID();
    expect((await createKey(key)).statusCode).toBe(201);
    const other = await newRegion(t);
    const res = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': other.key, 'idempotency-key': key },
      payload: { description: 'ci' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  it('without the header, creates each time', async () => {
    expect((await createKey(undefined)).statusCode).toBe(201);
    expect((await createKey(undefined)).statusCode).toBe(201);
    expect(await activeKeys()).toBe(3);
  });

  it.each([
    ['empty', ''],
    ['an empty sf-string', '""'],
    ['over 255 characters', 'k'.repeat(256)],
    ['with a control character', 'abc\tdef'],
    ['an unterminated sf-string', '"abc'],
  ])('refuses a key that is %s with a 400 naming the header', async (_, value) => {
    const body = expectProblem(await createKey(value), 400, 'validation');
    expect(body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
  });

  it('refuses the header sent twice', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/auth/region/api-keys',
      headers: { 'x-api-key': region.key, 'idempotency-key': ['a', 'b'] },
      payload: {},
    });
    expect(expectProblem(res, 400, 'validation').errors[0].field).toBe('Idempotency-Key');
  });
});

// A path parameter derived from the key: the same request each time, with an id that exists nowhere.
const randomUUIDFor = (key: string) => `${key.slice(0, 8)}-0000-4000-8000-000000000000`;

describe('other creates', () => {
  it('replays a sign-up by client address', async () => {
    const key = randomUUID();
    const signUp = () =>
      t.request({
        method: 'POST',
        url: '/user/signup',
        headers: { 'idempotency-key': key },
        payload: { email: `idem-${key}@example.com`, password: 'correct horse battery' },
      });
    const first = await signUp();
    expect(first.statusCode).toBe(201);
    const again = await signUp();
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });

  it('replays a planet create, and an upload only with the same bytes', async () => {
    const key = randomUUID();
    const create = () =>
      t.request({
        method: 'POST',
        url: '/planets',
        headers: { authorization: user.basic, 'idempotency-key': key },
        payload: { name: 'Vulcan' },
      });
    const planet = (await create()).json<{ id: number }>();
    const again = await create();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json<{ id: number }>().id).toBe(planet.id);

    const upload = (file: string, uploadKey: string) => {
      const form = multipart([{ name: 'image', filename: file, content: fixture(file) }]);
      return t.request({
        method: 'POST',
        url: `/planets/${planet.id}/image`,
        headers: { ...form.headers, authorization: user.basic, 'idempotency-key': uploadKey },
        payload: form.payload,
      });
    };
    const uploadKey = randomUUID();
    const uploaded = await upload('mars.png', uploadKey);
    expect(uploaded.statusCode).toBe(200);
    const replayed = await upload('mars.png', uploadKey);
    expect(replayed.statusCode).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toEqual(uploaded.json());
    expectProblem(await upload('neptune.gif', uploadKey), 422, 'idempotency-key-reused');
  });
});

describe('what Swagger UI sends from the document', () => {
  type Schema = { $ref?: string; example?: unknown; properties?: Record<string, Schema> };
  let doc: {
    paths: Record<string, Record<string, { operationId: string; parameters?: object[]; requestBody?: any }>>;
    components: { schemas: Record<string, Schema> };
  };
  beforeAll(async () => {
    doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
  });
  const operations = () => Object.values(doc.paths).flatMap((path) => Object.values(path));

  it('prefills no Idempotency-Key: "Try it out" would send the same one for every reader', () => {
    const headers = operations().flatMap((operation) =>
      (operation.parameters ?? []).filter((p) => (p as { name: string }).name === 'Idempotency-Key'),
    );
    expect(headers.length).toBeGreaterThanOrEqual(6);
    for (const header of headers) {
      expect(header).not.toHaveProperty('example');
      expect(header).not.toHaveProperty('examples');
      expect(header).not.toHaveProperty('schema.example');
      expect(header).not.toHaveProperty('schema.default');
    }
  });

  /** The body "Try it out" starts with: the first request example, else one built from the schema's examples. */
  const prefilledBody = (operationId: string): Record<string, unknown> => {
    const operation = operations().find((o) => o.operationId === operationId)!;
    const media = operation.requestBody.content['application/json'];
    const first = media.example ?? Object.values<{ value: unknown }>(media.examples ?? {})[0]?.value;
    if (first !== undefined) return first as Record<string, unknown>;
    const resolve = (schema: Schema): Schema =>
      schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
    const { properties = {} } = resolve(media.schema);
    return Object.fromEntries(
      Object.entries(properties)
        .filter(([, property]) => property.example !== undefined)
        .map(([name, property]) => [name, property.example]),
    );
  };

  it.each(['createApiKey', 'rollApiKey', 'updateApiKey'])(
    'prefills a %s body whose key works from any address, IPv4 or IPv6',
    async (operationId) => {
      const body = prefilledBody(operationId);
      const target = operationId === 'createApiKey' ? '' : `/${(await createKey(undefined)).json<{ id: string }>().id}`;
      const res = await t.request({
        method: operationId === 'updateApiKey' ? 'PATCH' : 'POST',
        url: `/auth/region/api-keys${target}${operationId === 'rollApiKey' ? '/roll' : ''}`,
        headers: { 'x-api-key': region.key },
        payload: body,
      });
      expect({ status: res.statusCode, body: res.json() }).toMatchObject({
        status: operationId === 'updateApiKey' ? 200 : 201,
        body: { allowedCidrs: null, expiresAt: null },
      });
      const secret = res.json<{ key?: string }>().key;
      for (const remoteAddress of secret ? ['198.51.100.7', '2001:db8:77::1'] : []) {
        const me = await t.request({
          method: 'GET',
          url: '/auth/regions/me',
          headers: { 'x-api-key': secret! },
          remoteAddress,
        });
        expect({ remoteAddress, status: me.statusCode }).toEqual({ remoteAddress, status: 200 });
      }
    },
  );
});
