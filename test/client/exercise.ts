/**
 * A client of this API, written as an integrator would write one: openapi-fetch over the
 * types openapi-typescript generates from openapi.json (generated/api.d.ts). It calls every
 * operation, its successes and its errors, and writes every exchange to EXCHANGES_FILE for
 * the test to check against the document (test/e2e/generated-client.e2e-spec.ts, which
 * generates the types, compiles this under --strict and runs it against the server).
 *
 * Environment: API_BASE_URL, REGION_API_KEY (a key holding both permissions, the only one
 * of its region), FIXTURES_DIR (test/fixtures), EXCHANGES_FILE.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import createClient, { type Client } from 'openapi-fetch';

import type { components, paths } from './generated/api';
import { check, exchanges, expectData, expectNoContent, expectProblem, expectStatus, recorder } from './support';

type Api = Client<paths>;
type Planet = components['schemas']['Planet'];

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const baseUrl = env('API_BASE_URL');

function client(headers: Record<string, string> = {}): Api {
  const api = createClient<paths>({ baseUrl, headers });
  api.use(recorder);
  return api;
}

const basic = (email: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`,
});

/** No id the server ever hands out: unknown to every region. */
const UNKNOWN_KEY_ID = randomUUID();
/** A planet id no test creates (ids are small integers, in range of the document's maximum). */
const UNKNOWN_PLANET_ID = 2_000_000_000;

async function health(anyone: Api): Promise<void> {
  const live = await expectData(anyone.GET('/health/live'), 200, 'liveness');
  check(live.status === 'ok', 'live says ok');
  await expectData(anyone.GET('/health/ready'), 200, 'readiness');
  await expectData(anyone.GET('/health'), 200, 'health');
}

async function regionKeys(anyone: Api): Promise<void> {
  const admin = client({ 'X-API-Key': env('REGION_API_KEY') });

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

  const usage = await expectData(
    admin.GET('/auth/region/api-keys/{id}/usage', { params: { path: { id: reader.id }, query: { days: 7 } } }),
    200,
    'usage of the read-only key',
  );
  check(
    usage.data.length === 7 && usage.data.every((day) => Number.isInteger(day.requests)),
    'one count for each of 7 days',
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

interface Person {
  id: number;
  email: string;
  password: string;
  api: Api;
}

async function users(anyone: Api): Promise<{ ada: Person; bob: Person }> {
  const ada = { name: 'Ada', email: `ada-${randomUUID()}@example.com`, password: 'correct horse battery' };
  const created = await expectData(anyone.POST('/user/signup', { body: ada }), 201, 'sign up');
  check(created.name === 'Ada', 'the account has its name');
  await expectProblem(
    anyone.POST('/user/signup', { body: { ...ada, email: ada.email.toUpperCase() } }),
    409,
    'email-taken',
    'sign up again',
  );
  await expectProblem(
    anyone.POST('/user/signup', { body: { email: `short-${randomUUID()}@example.com`, password: 'short' } }),
    400,
    'validation',
    'sign up with a short password',
  );
  const bobEmail = `bob-${randomUUID()}@example.com`;
  const bobCreated = await expectData(
    anyone.POST('/user/signup', { body: { email: bobEmail, password: 'another good password' } }),
    201,
    'sign up without a name',
  );
  check(bobCreated.name === null, 'no name is null');

  const { token } = await expectData(
    anyone.POST('/auth/token', { body: { email: ada.email, password: ada.password } }),
    201,
    'get a token',
  );
  await expectProblem(
    anyone.POST('/auth/token', { body: { email: ada.email, password: 'wrong password' } }),
    401,
    'unauthenticated',
    'a token for a wrong password',
  );
  await expectProblem(
    anyone.POST('/auth/token', { body: { email: 'not an email', password: ada.password } }),
    400,
    'validation',
    'a token for a malformed email',
  );

  const asAda = client({ Authorization: `Bearer ${token}` });
  const asBob = client(basic(bobEmail, 'another good password'));
  const me = await expectData(asAda.GET('/me'), 200, 'me with a token');
  check(me.id === created.id, 'the token is Ada’s');
  const bob = await expectData(asBob.GET('/me'), 200, 'me with Basic');
  await expectProblem(anyone.GET('/me'), 401, 'unauthenticated', 'me without credentials');
  await expectProblem(
    client({ Authorization: 'Bearer not.a.token' }).GET('/me'),
    401,
    'unauthenticated',
    'me with a made-up token',
  );
  return {
    ada: { id: me.id, email: ada.email, password: ada.password, api: asAda },
    bob: { id: bob.id, email: bobEmail, password: 'another good password', api: asBob },
  };
}

async function planets(anyone: Api, { ada, bob }: { ada: Person; bob: Person }): Promise<void> {
  const kepler = await expectData(
    ada.api.POST('/planets', {
      body: { name: 'Kepler-22b', type: 'super_earth', habitabilityIndex: 0.6, tags: ['exoplanet'] },
    }),
    201,
    'create a planet',
  );
  check(
    kepler.creator.id === ada.id && kepler.satellites.length === 0 && kepler.image === null,
    'a new planet is its creator’s, bare',
  );
  const untyped = await expectData(
    ada.api.POST('/planets', { body: { name: 'Unclassified' } }),
    201,
    'create a planet without a type',
  );
  // A planet may lack a type, and the generated Planet says so: this line stops compiling if
  // the document ever makes `type` required again.
  const planetTypeIsOptional: Record<never, never> extends Pick<Planet, 'type'> ? true : false = true;
  const untypedType = untyped.type;
  check(planetTypeIsOptional && untypedType === undefined, 'a planet created without a type has none');
  await expectProblem(
    anyone.POST('/planets', { body: { name: 'Nobody’s' } }),
    401,
    'unauthenticated',
    'create a planet without credentials',
  );
  const blank = await expectProblem(
    ada.api.POST('/planets', { body: { name: '' } }),
    400,
    'validation',
    'create a planet without a name',
  );
  check(blank.errors?.some((e) => e.field === 'name') === true, 'the 400 names name');

  const page = await expectData(
    anyone.GET('/planets', { params: { query: { limit: 1, offset: 0 } } }),
    200,
    'a page of planets',
  );
  check(
    page.data.length === 1 && page.meta.total >= 2 && page.meta.next !== null,
    'one planet of several, with a next page',
  );
  await expectProblem(
    anyone.GET('/planets', { params: { query: { limit: 0 } } }),
    400,
    'validation',
    'a page of 0 planets',
  );

  const read = await expectData(
    anyone.GET('/planets/{planetId}', { params: { path: { planetId: kepler.id } } }),
    200,
    'a planet',
  );
  check(read.name === 'Kepler-22b' && read.type === 'super_earth', 'the planet as created');
  await expectProblem(
    anyone.GET('/planets/{planetId}', { params: { path: { planetId: UNKNOWN_PLANET_ID } } }),
    404,
    'not-found',
    'an unknown planet',
  );
  await expectProblem(
    anyone.GET('/planets/{planetId}', { params: { path: { planetId: 0 } } }),
    400,
    'validation',
    'planet 0',
  );

  const keplerPath = { params: { path: { planetId: kepler.id } } };
  const update: components['schemas']['PlanetInput'] = {
    name: 'Kepler-22b',
    description: 'In the habitable zone of Kepler-22',
    type: 'super_earth',
    tags: ['exoplanet', 'habitable-zone'],
  };
  // Conditional requests, as an editor that must not overwrite someone else's change does them.
  const { response: readResponse } = await anyone.GET('/planets/{planetId}', keplerPath);
  const etag = readResponse.headers.get('ETag');
  if (etag === null) throw new Error('a planet comes with its ETag');
  const notModified = await expectStatus(
    anyone.GET('/planets/{planetId}', { params: { ...keplerPath.params, header: { 'If-None-Match': etag } } }),
    304,
    'a planet not modified',
  );
  check(notModified.headers.get('ETag') === etag, 'the 304 names the ETag held');
  const updated = await expectData(
    ada.api.PUT('/planets/{planetId}', {
      params: { ...keplerPath.params, header: { 'If-Match': etag } },
      body: update,
    }),
    200,
    'update a planet as read',
  );
  check(updated.description === update.description && updated.tags.length === 2, 'the planet as updated');
  await expectProblem(
    ada.api.PUT('/planets/{planetId}', {
      params: { ...keplerPath.params, header: { 'If-Match': etag } },
      body: { name: 'Stale' },
    }),
    412,
    'precondition-failed',
    'update a planet from a stale read',
  );
  await expectProblem(
    bob.api.PUT('/planets/{planetId}', { ...keplerPath, body: update }),
    403,
    'forbidden',
    'update another’s planet',
  );
  await expectProblem(
    ada.api.PUT('/planets/{planetId}', { params: { path: { planetId: UNKNOWN_PLANET_ID } }, body: update }),
    404,
    'not-found',
    'update an unknown planet',
  );
  await expectProblem(
    anyone.PUT('/planets/{planetId}', { ...keplerPath, body: update }),
    401,
    'unauthenticated',
    'update without credentials',
  );

  const ceres = await expectData(
    ada.api.POST('/celestial-bodies', { body: { type: 'dwarf', name: 'Ceres' } }),
    201,
    'create a dwarf planet',
  );
  check('creator' in ceres && ceres.type === 'dwarf', 'a planet type makes a planet');
  const moon = await expectData(
    ada.api.POST('/celestial-bodies', {
      body: { type: 'moon', name: 'Kepler-22b I', diameter: 1200, orbit: { planet: { id: kepler.id } } },
    }),
    201,
    'create a moon',
  );
  check('orbit' in moon && moon.orbit.planet.id === kepler.id, 'a moon orbits the planet it names');
  await expectProblem(
    ada.api.POST('/celestial-bodies', {
      body: { type: 'comet', name: 'Lost', orbit: { planet: { id: UNKNOWN_PLANET_ID } } },
    }),
    404,
    'not-found',
    'a comet around an unknown planet',
  );
  await expectProblem(
    anyone.POST('/celestial-bodies', { body: { type: 'dwarf', name: 'Eris' } }),
    401,
    'unauthenticated',
    'create a body without credentials',
  );

  await images(anyone, ada, bob, kepler.id, untyped.id);

  const untypedPath = { params: { path: { planetId: untyped.id } } };
  await expectProblem(bob.api.DELETE('/planets/{planetId}', untypedPath), 403, 'forbidden', 'delete another’s planet');
  await expectProblem(
    anyone.DELETE('/planets/{planetId}', untypedPath),
    401,
    'unauthenticated',
    'delete without credentials',
  );
  await expectNoContent(ada.api.DELETE('/planets/{planetId}', untypedPath), 204, 'delete a planet');
  await expectProblem(ada.api.DELETE('/planets/{planetId}', untypedPath), 404, 'not-found', 'delete a deleted planet');
  const withMoon = await expectData(anyone.GET('/planets/{planetId}', keplerPath), 200, 'a planet with its moon');
  check(withMoon.satellites.length === 1, 'the moon is listed with its planet');
}

/** The pages problem types point to: every problem's `type` leads to one. */
async function problemPages(anyone: Api): Promise<void> {
  const list = await anyone.GET('/problems', { parseAs: 'text' });
  check(
    list.response.status === 200 && typeof list.data === 'string' && list.data.includes('/problems/last-api-key'),
    'the list of problem types',
  );
  const problem = await expectProblem(anyone.GET('/auth/regions/me'), 401, 'unauthenticated', 'a problem to follow');
  const slug = problem.type.split('/').pop() ?? '';
  const page = await anyone.GET('/problems/{slug}', { params: { path: { slug } }, parseAs: 'text' });
  check(
    page.response.status === 200 && typeof page.data === 'string' && page.data.includes(problem.title),
    'a problem’s type is a page about it',
  );
  await expectProblem(
    anyone.GET('/problems/{slug}', { params: { path: { slug: 'no-such-problem' } } }),
    404,
    'not-found',
    'an unknown problem type',
  );
}

async function images(anyone: Api, ada: Person, bob: Person, planetId: number, bareId: number): Promise<void> {
  const fixtures = env('FIXTURES_DIR');
  const png = readFileSync(join(fixtures, 'mars.png'));
  const image = new Blob([png], { type: 'image/png' });
  const notAnImage = new Blob([readFileSync(join(fixtures, 'not-an-image.txt'))], { type: 'image/png' });
  const form = (body: { image: Blob }) => {
    const data = new FormData();
    data.append('image', body.image, 'mars.png');
    return data;
  };
  const path = { params: { path: { planetId } } };

  const uploaded = await expectData(
    ada.api.POST('/planets/{planetId}/image', { ...path, body: { image }, bodySerializer: form }),
    200,
    'upload an image',
  );
  check(
    uploaded.mimeType === 'image/png' && uploaded.fileSize === png.length,
    'the image is recognised as the PNG sent',
  );
  const fake = await expectProblem(
    ada.api.POST('/planets/{planetId}/image', { ...path, body: { image: notAnImage }, bodySerializer: form }),
    400,
    'validation',
    'upload text as an image',
  );
  check(fake.errors?.some((e) => e.field === 'image') === true, 'the 400 names image');
  await expectProblem(
    bob.api.POST('/planets/{planetId}/image', { ...path, body: { image }, bodySerializer: form }),
    403,
    'forbidden',
    'upload to another’s planet',
  );
  await expectProblem(
    ada.api.POST('/planets/{planetId}/image', {
      params: { path: { planetId: UNKNOWN_PLANET_ID } },
      body: { image },
      bodySerializer: form,
    }),
    404,
    'not-found',
    'upload to an unknown planet',
  );
  await expectProblem(
    anyone.POST('/planets/{planetId}/image', { ...path, body: { image }, bodySerializer: form }),
    401,
    'unauthenticated',
    'upload without credentials',
  );

  const served = await anyone.GET('/planets/{planetId}/image', { ...path, parseAs: 'blob' });
  const blob = await expectData(served, 200, 'the image');
  check(Buffer.from(await blob.arrayBuffer()).equals(png), 'the image served is the one uploaded');
  const etag = served.response.headers.get('ETag');
  check(etag !== null, 'the image has an ETag');
  if (etag !== null) {
    await expectStatus(
      anyone.GET('/planets/{planetId}/image', { ...path, headers: { 'If-None-Match': etag } }),
      304,
      'the image again, unchanged',
    );
  }
  await expectProblem(
    anyone.GET('/planets/{planetId}/image', { params: { path: { planetId: bareId } } }),
    404,
    'not-found',
    'the image of a planet without one',
  );
}

/**
 * Never run: each line is a mistake the generated types must refuse. Were the types `any`,
 * a directive would go unused and the compilation would fail.
 */
export function mistakesTheTypesCatch(api: Api): void {
  // @ts-expect-error: no such path
  void api.GET('/planet/{planetId}', { params: { path: { planetId: 1 } } });
  // @ts-expect-error: planetId is a number
  void api.GET('/planets/{planetId}', { params: { path: { planetId: 'one' } } });
  // @ts-expect-error: a planet needs a name
  void api.POST('/planets', { body: { type: 'terrestrial' } });
  // @ts-expect-error: not a permission
  void api.POST('/auth/region/api-keys', { body: { permissions: ['admin'] } });
  // @ts-expect-error: the upload is a file, not a string
  void api.POST('/planets/{planetId}/image', { params: { path: { planetId: 1 } }, body: { image: 'mars.png' } });
  void api.GET('/auth/regions/me').then(({ data }) => {
    // @ts-expect-error: a region lists keys, never their secrets
    void data?.apiKeys[0]?.key;
  });
}

async function main(): Promise<void> {
  const anyone = client();
  try {
    await health(anyone);
    await regionKeys(anyone);
    const people = await users(anyone);
    await planets(anyone, people);
    await problemPages(anyone);
  } finally {
    writeFileSync(env('EXCHANGES_FILE'), JSON.stringify(exchanges));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
