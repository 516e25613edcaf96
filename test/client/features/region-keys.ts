import { randomUUID } from 'node:crypto';

import { type Api, check, type ClientContext, expectData, expectNoContent, expectProblem } from '../support';

/** No id the server ever hands out: unknown to every region. */
const UNKNOWN_KEY_ID = randomUUID();

/** Region API keys: the region, its keys (create, get, update, usage, roll, delete) and its events. */
export async function exercise({ anyone, client, regionApiKey }: ClientContext): Promise<void> {
  const admin = client({ 'X-API-Key': regionApiKey });

  const region = await expectData(admin.GET('/auth/regions/me'), 200, 'my region');
  const [first] = region.apiKeys;
  if (region.apiKeys.length !== 1 || first === undefined) throw new Error('the region should start with its one key');
  await expectProblem(anyone.GET('/auth/regions/me'), 401, 'unauthenticated', 'my region without a key');

  const reader = await expectData(
    admin.POST('/auth/region/api-keys', {
      body: { description: 'Timetable sync (read only)', permissions: ['region:read'] },
    }),
    201,
    'create a read-only key',
  );
  check(
    reader.key.length > 0 && reader.permissions.join() === 'region:read',
    'the new key is read-only and shown once',
  );
  const asReader = client({ 'X-API-Key': reader.key });
  await expectData(asReader.GET('/auth/regions/me'), 200, 'my region with the read-only key');
  await expectProblem(
    asReader.POST('/auth/region/api-keys', { body: {} }),
    403,
    'insufficient-permission',
    'create with a read-only key',
  );
  await expectProblem(
    anyone.POST('/auth/region/api-keys', { body: {} }),
    401,
    'unauthenticated',
    'create without a key',
  );
  const empty = await expectProblem(
    admin.POST('/auth/region/api-keys', { body: { permissions: [] } }),
    400,
    'validation',
    'create with no permissions',
  );
  check(empty.errors?.some((e) => e.field === 'permissions') === true, 'the 400 names permissions');

  const writer = await expectData(
    admin.POST('/auth/region/api-keys', {
      body: { description: 'Key manager', permissions: ['keys:write'], allowedCidrs: ['127.0.0.1', '::1'] },
    }),
    201,
    'create a write-only key',
  );
  check(writer.allowedCidrs?.join() === '127.0.0.1/32,::1/128', 'the allowlist is stored in canonical form');
  const asWriter = client({ 'X-API-Key': writer.key });
  await expectProblem(
    asWriter.GET('/auth/regions/me'),
    403,
    'insufficient-permission',
    'my region with a write-only key',
  );

  const keyPath = { params: { path: { id: writer.id } } };
  const fetched = await expectData(admin.GET('/auth/region/api-keys/{id}', keyPath), 200, 'get the write-only key');
  check(fetched.id === writer.id && fetched.expiresAt === null, 'a key reads as it was created, without an expiry');
  await expectProblem(
    admin.GET('/auth/region/api-keys/{id}', { params: { path: { id: UNKNOWN_KEY_ID } } }),
    404,
    'not-found',
    'get an unknown key',
  );
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const updated = await expectData(
    admin.PATCH('/auth/region/api-keys/{id}', { ...keyPath, body: { description: 'Key manager (today)', expiresAt } }),
    200,
    'update the write-only key',
  );
  check(
    updated.description === 'Key manager (today)' && updated.expiresAt === expiresAt,
    'the key has its new description and expiry',
  );
  const widened = await expectProblem(
    admin.PATCH('/auth/region/api-keys/{id}', { ...keyPath, body: { permissions: ['region:read'] } }),
    400,
    'validation',
    'give a key a permission it does not hold',
  );
  check(widened.errors?.some((e) => e.field === 'permissions') === true, 'the 400 names permissions');
  await expectProblem(
    admin.PATCH('/auth/region/api-keys/{id}', {
      params: { path: { id: writer.id }, header: { 'If-Match': '"a-version-long-gone"' } },
      body: { description: null },
    }),
    412,
    'precondition-failed',
    'update a key that changed since it was read',
  );
  await expectProblem(
    anyone.GET('/auth/region/api-keys/{id}', keyPath),
    401,
    'unauthenticated',
    'get a key without a key',
  );
  await expectProblem(
    admin.PATCH('/auth/region/api-keys/{id}', { params: { path: { id: UNKNOWN_KEY_ID } }, body: {} }),
    404,
    'not-found',
    'update an unknown key',
  );
  await expectProblem(
    anyone.PATCH('/auth/region/api-keys/{id}', { ...keyPath, body: {} }),
    401,
    'unauthenticated',
    'update without a key',
  );

  const usage = await expectData(
    admin.GET('/auth/region/api-keys/{id}/usage', { params: { path: { id: reader.id }, query: { days: 7 } } }),
    200,
    'usage of the read-only key',
  );
  check(
    usage.data.length === 7 && usage.data.every((day) => Number.isInteger(day.requests)),
    'one count for each of 7 days',
  );
  const hourly = await expectData(
    admin.GET('/auth/region/api-keys/{id}/usage', {
      params: { path: { id: reader.id }, query: { granularity: 'hour' } },
    }),
    200,
    'hourly usage of the read-only key',
  );
  check(
    hourly.data.length === 168 && hourly.data.every((bucket) => 'hour' in bucket && bucket.requests >= 0),
    'one count for each of 168 hours',
  );
  await expectProblem(
    admin.GET('/auth/region/api-keys/{id}/usage', {
      // @ts-expect-error: the document lists the granularities; a careless client sends another
      params: { path: { id: reader.id }, query: { granularity: 'minute' } },
    }),
    400,
    'validation',
    'usage by the minute',
  );
  const current = await expectData(asReader.GET('/auth/region/api-keys/current'), 200, 'the read-only key itself');
  check(current.id === reader.id && current.permissions.join() === 'region:read', 'the current key is the caller');
  await expectProblem(anyone.GET('/auth/region/api-keys/current'), 401, 'unauthenticated', 'current without a key');
  const clients = await expectData(
    admin.GET('/auth/region/api-keys/{id}/clients', { params: { path: { id: first.id } } }),
    200,
    'clients of the first key',
  );
  check(
    clients.data.length <= 100 && clients.data.every((c) => c.requests >= 1 && c.firstSeenAt <= c.lastSeenAt),
    'each client has its requests and times',
  );
  await expectProblem(
    anyone.GET('/auth/region/api-keys/{id}/clients', { params: { path: { id: first.id } } }),
    401,
    'unauthenticated',
    'clients without a key',
  );
  await expectProblem(
    admin.GET('/auth/region/api-keys/{id}/clients', { params: { path: { id: UNKNOWN_KEY_ID } } }),
    404,
    'not-found',
    'clients of an unknown key',
  );
  await expectProblem(
    admin.GET('/auth/region/api-keys/{id}/usage', { params: { path: { id: reader.id }, query: { days: 0 } } }),
    400,
    'validation',
    'usage of 0 days',
  );
  await expectProblem(
    admin.GET('/auth/region/api-keys/{id}/usage', { params: { path: { id: UNKNOWN_KEY_ID } } }),
    404,
    'not-found',
    'usage of an unknown key',
  );
  await expectProblem(
    anyone.GET('/auth/region/api-keys/{id}/usage', { params: { path: { id: reader.id } } }),
    401,
    'unauthenticated',
    'usage without a key',
  );

  const rolled = await expectData(
    admin.POST('/auth/region/api-keys/{id}/roll', {
      params: { path: { id: reader.id } },
      body: { revokeOldAfterSeconds: 3600, permissions: ['region:read'] },
    }),
    201,
    'roll the read-only key',
  );
  check(
    rolled.replaces.id === reader.id && rolled.replaces.revokesAt !== null,
    'the new key replaces the old one, which stops later',
  );
  check(
    rolled.description === reader.description && rolled.permissions.join() === 'region:read',
    'the new key keeps the old one’s description, with the permissions asked for',
  );
  const rollPath = { params: { path: { id: reader.id } }, body: {} };
  await expectProblem(
    admin.POST('/auth/region/api-keys/{id}/roll', rollPath),
    409,
    'api-key-already-rolled',
    'roll a rolled key',
  );
  await expectProblem(
    admin.POST('/auth/region/api-keys/{id}/roll', { params: { path: { id: UNKNOWN_KEY_ID } }, body: {} }),
    404,
    'not-found',
    'roll an unknown key',
  );
  await expectProblem(
    admin.POST('/auth/region/api-keys/{id}/roll', { params: { path: { id: 'not-a-uuid' } }, body: {} }),
    400,
    'validation',
    'roll a malformed id',
  );
  await expectProblem(
    anyone.POST('/auth/region/api-keys/{id}/roll', rollPath),
    401,
    'unauthenticated',
    'roll without a key',
  );

  const leaked = { body: { keys: [rolled.key, 'not a key'] } };
  const received = await expectData(anyone.POST('/auth/region/api-keys/leaked', leaked), 202, 'report a leaked key');
  check(received.received === 2, 'every string is counted as received');
  const afterLeak = await expectData(admin.GET('/auth/regions/me'), 200, 'my region after the report');
  check(!afterLeak.apiKeys.some((key) => key.id === rolled.id), 'the reported key is revoked at once');
  await expectProblem(
    admin.POST('/auth/region/api-keys/leaked', leaked),
    400,
    'credentials-not-accepted',
    'report with a key',
  );
  await expectProblem(
    anyone.POST('/auth/region/api-keys/leaked', { body: { keys: [] } }),
    400,
    'validation',
    'report no key',
  );

  const removeWriter = { params: { path: { id: writer.id } } };
  await expectProblem(
    admin.DELETE('/auth/region/api-keys/{id}', { params: { path: { id: 'not-a-uuid' } } }),
    400,
    'validation',
    'delete a malformed id',
  );
  await expectProblem(
    admin.DELETE('/auth/region/api-keys/{id}', { params: { path: { id: UNKNOWN_KEY_ID } } }),
    404,
    'not-found',
    'delete an unknown key',
  );
  await expectProblem(
    anyone.DELETE('/auth/region/api-keys/{id}', removeWriter),
    401,
    'unauthenticated',
    'delete without a key',
  );
  await expectNoContent(admin.DELETE('/auth/region/api-keys/{id}', removeWriter), 204, 'delete the write-only key');
  await expectProblem(
    admin.DELETE('/auth/region/api-keys/{id}', removeWriter),
    404,
    'not-found',
    'delete a deleted key',
  );
  // The first key is now the region's only permanent key that can manage keys.
  await expectProblem(
    admin.DELETE('/auth/region/api-keys/{id}', { params: { path: { id: first.id } } }),
    409,
    'last-api-key',
    'delete the last managing key',
  );

  const newest = await expectData(
    admin.GET('/auth/region/events', { params: { query: { limit: 2 } } }),
    200,
    'the newest events',
  );
  check(newest.data.length === 2 && newest.data[0]?.type === 'api_key.revoked', 'the newest event is the deletion');
  check(newest.meta.next !== null, 'there are older events');
  if (newest.meta.next !== null) {
    const older = await expectData(
      admin.GET('/auth/region/events', { params: { query: { limit: 100, cursor: newest.meta.next } } }),
      200,
      'older events',
    );
    check(
      older.meta.next === null && older.data.at(-1)?.type === 'region.created',
      'the oldest event is the region made by an operator',
    );
  }
  await expectProblem(
    admin.GET('/auth/region/events', { params: { query: { cursor: 'not-a-cursor' } } }),
    400,
    'validation',
    'events from a made-up cursor',
  );
  await expectProblem(anyone.GET('/auth/region/events'), 401, 'unauthenticated', 'events without a key');
}

/**
 * Never run: each line is a mistake the generated types must refuse. Were the types `any`,
 * a directive would go unused and the compilation would fail.
 */
export function mistakesTheTypesCatch(api: Api): void {
  // @ts-expect-error: not a permission
  void api.POST('/auth/region/api-keys', { body: { permissions: ['admin'] } });
  void api.GET('/auth/regions/me').then(({ data }) => {
    // @ts-expect-error: a region lists keys, never their secrets
    void data?.apiKeys[0]?.key;
  });
  // @ts-expect-error: a key's expiry is a date-time string, not a number of seconds
  void api.PATCH('/auth/region/api-keys/{id}', { params: { path: { id: UNKNOWN_KEY_ID } }, body: { expiresAt: 3600 } });
}
