import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { components } from '../generated/api';
import {
  type Api,
  check,
  type ClientContext,
  expectData,
  expectNoContent,
  expectProblem,
  expectStatus,
  type Person,
  UNKNOWN_PLANET_ID,
} from '../support';

type Planet = components['schemas']['Planet'];

/** Ada's and Bob's planets. */
export const after = ['users'];

/** Planets (with conditional requests), celestial bodies and planet images. */
export async function exercise({ anyone, fixturesDir, shared }: ClientContext): Promise<void> {
  const { ada, bob } = shared('people');
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
  // A retry with the same Idempotency-Key gets the first answer, never a second planet.
  const idempotencyKey = { header: { 'Idempotency-Key': `"${kepler.id}-${Date.now()}-retry"` } };
  const retried = ada.api.POST('/planets', { params: idempotencyKey, body: { name: 'Retried' } });
  const first = await expectData(retried, 201, 'create a planet with an Idempotency-Key');
  const replay = await ada.api.POST('/planets', { params: idempotencyKey, body: { name: 'Retried' } });
  check(
    replay.response.status === 201 &&
      replay.response.headers.get('idempotent-replayed') === 'true' &&
      replay.data?.id === first.id,
    'the same Idempotency-Key and body replay the first planet',
  );
  await expectProblem(
    ada.api.POST('/planets', { params: idempotencyKey, body: { name: 'Another' } }),
    422,
    'idempotency-key-reused',
    'reuse an Idempotency-Key for another body',
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

  await images(anyone, fixturesDir, ada, bob, kepler.id, untyped.id);

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

async function images(
  anyone: Api,
  fixtures: string,
  ada: Person,
  bob: Person,
  planetId: number,
  bareId: number,
): Promise<void> {
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
  // @ts-expect-error: the upload is a file, not a string
  void api.POST('/planets/{planetId}/image', { params: { path: { planetId: 1 } }, body: { image: 'mars.png' } });
}
