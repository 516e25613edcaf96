import { gunzipSync } from 'node:zlib';

import type { TestApp } from '../support/test-app';
import type { UserFixture } from '../support/users';
import {
  createPlanet,
  createSatellite,
  expectProblem,
  fixture,
  multipart,
  startWithAliceAndBob,
} from './planets-support';

/**
 * Conditional requests on a planet: a strong ETag on GET, 304 for If-None-Match, and
 * If-Match on PUT and DELETE so that two editors cannot overwrite each other unseen.
 */

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;

beforeAll(async () => {
  ({ t, alice, bob } = await startWithAliceAndBob());
});
afterAll(async () => t?.close());

const STRONG_ETAG = /^"[0-9a-f]{64}"$/;

const get = (id: number, headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: `/planets/${id}`, headers });
const put = (user: UserFixture, id: number, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'PUT', url: `/planets/${id}`, headers: { authorization: user.bearer, ...headers }, payload });
const del = (user: UserFixture, id: number, headers: Record<string, string> = {}) =>
  t.request({ method: 'DELETE', url: `/planets/${id}`, headers: { authorization: user.bearer, ...headers } });
const etagOf = async (id: number): Promise<string> => String((await get(id)).headers.etag);

function expectPreconditionFailed(res: Awaited<ReturnType<typeof get>>) {
  const body = expectProblem(res, 412);
  expect(body).toMatchObject({ type: '/problems/precondition-failed', title: 'Precondition failed' });
  return body;
}

/** What RFC 9110's grammar refuses, some of them holding the planet's current tag. */
const malformed = (etag: string) => [
  'junk',
  '',
  ';',
  'W/',
  etag.slice(1, -1),
  `garbage ${etag}`,
  `${etag}, *`,
  `*, ${etag}`,
  `${etag};q=1`,
  `${etag} garbage`,
  `w/${etag}`,
];

function expectMalformed(res: Awaited<ReturnType<typeof get>>, header: 'If-Match' | 'If-None-Match') {
  const body = expectProblem(res, 400, header);
  expect(body.type).toBe('/problems/validation');
  expect(body.detail).toBe(`The ${header} header is malformed.`);
  expect(body.errors).toEqual([{ field: header, message: expect.stringContaining('quoted entity tags') }]);
}

describe('GET /planets/{planetId}', () => {
  it('sends a strong ETag that stays while the planet does', async () => {
    const planet = await createPlanet(t, alice, { description: 'Red' });
    const first = await get(planet.id);
    expect(first.statusCode).toBe(200);
    expect(first.headers.etag).toMatch(STRONG_ETAG);
    expect((await get(planet.id)).headers.etag).toBe(first.headers.etag);
    // HEAD answers with the same validator (HEAD is not an operation of the document, so not checked against it).
    const head = await t.app.inject({ method: 'HEAD', url: `/planets/${planet.id}` });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(first.headers.etag);
    // Another planet changing changes nothing here.
    await put(alice, (await createPlanet(t, alice)).id, { name: 'Other' });
    expect(await etagOf(planet.id)).toBe(first.headers.etag);
  });

  it('changes the ETag with every change of the representation: fields, satellites, image', async () => {
    const planet = await createPlanet(t, alice);
    const seen = [await etagOf(planet.id)];
    expect((await put(alice, planet.id, { name: 'Mars', description: 'Changed' })).statusCode).toBe(200);
    seen.push(await etagOf(planet.id));
    await createSatellite(t, alice, planet.id);
    seen.push(await etagOf(planet.id));
    const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: fixture('mars.png') }]);
    const upload = await t.request({
      method: 'POST',
      url: `/planets/${planet.id}/image`,
      headers: { authorization: alice.basic, ...form.headers },
      payload: form.payload,
    });
    expect(upload.statusCode).toBe(200);
    seen.push(await etagOf(planet.id));
    expect(new Set(seen).size).toBe(4);
  });

  it('answers If-None-Match with the current ETag (in a list, weak, or *) with 304, the ETag a 200 carries, and no body', async () => {
    const planet = await createPlanet(t, alice);
    const etag = await etagOf(planet.id);
    for (const held of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get(planet.id, { 'if-none-match': held });
      expect({ held, status: res.statusCode, body: res.body }).toEqual({ held, status: 304, body: '' });
      expect(res.headers.etag).toBe(etag);
    }
    // A coded tag names another representation than the one this request gets.
    for (const stale of ['"other"', 'W/"other"', '"other", ,W/"x"', `${etag.slice(0, -1)}-gzip"`]) {
      const res = await get(planet.id, { 'if-none-match': stale });
      expect({ stale, status: res.statusCode }).toEqual({ stale, status: 200 });
      expect(res.headers.etag).toBe(etag);
    }
    for (const ifNoneMatch of malformed(etag))
      expectMalformed(await get(planet.id, { 'if-none-match': ifNoneMatch }), 'If-None-Match');
    await put(alice, planet.id, { name: 'Changed' });
    const changed = await get(planet.id, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().name).toBe('Changed');
  });
});

describe('PUT /planets/{planetId} with If-Match', () => {
  it('changes the planet while it is as the client read it, and sends the new ETag', async () => {
    const planet = await createPlanet(t, alice);
    const etag = await etagOf(planet.id);
    const res = await put(alice, planet.id, { name: 'Mars II' }, { 'if-match': etag });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toMatch(STRONG_ETAG);
    expect(res.headers.etag).not.toBe(etag);
    const now = await get(planet.id);
    expect(now.headers.etag).toBe(res.headers.etag);
    expect(now.json()).toEqual(res.json());
    // The new ETag is good for the next change; `*` holds for any current state.
    expect(
      (await put(alice, planet.id, { name: 'Mars III' }, { 'if-match': String(res.headers.etag) })).statusCode,
    ).toBe(200);
    expect((await put(alice, planet.id, { name: 'Mars IV' }, { 'if-match': '*' })).statusCode).toBe(200);
  });

  it('refuses a stale or weak If-Match with 412, a malformed one with 400, and changes nothing', async () => {
    const planet = await createPlanet(t, alice, { description: 'Kept' });
    const stale = await etagOf(planet.id);
    await put(alice, planet.id, { name: 'Mars', description: 'Newer' });
    const current = await get(planet.id);
    const etag = String(current.headers.etag);
    for (const ifMatch of [stale, '""']) {
      const refused = expectPreconditionFailed(
        await put(alice, planet.id, { name: 'Overwritten' }, { 'if-match': ifMatch }),
      );
      expect(refused.detail).toMatch(/has changed since the version named in If-Match/);
    }
    // A weak tag never matches (strong comparison): the answer says so, not that the planet changed.
    for (const ifMatch of [`W/${etag}`, `${stale}, W/${etag}`]) {
      const refused = expectPreconditionFailed(
        await put(alice, planet.id, { name: 'Overwritten' }, { 'if-match': ifMatch }),
      );
      expect(refused.detail).toMatch(/If-Match compares entity tags strongly, so a weak tag \(W\/"…"\) never matches/);
      expect(refused.detail).not.toMatch(/has changed/);
      expectPreconditionFailed(await del(alice, planet.id, { 'if-match': ifMatch }));
    }
    for (const ifMatch of malformed(etag)) {
      expectMalformed(await put(alice, planet.id, { name: 'Overwritten' }, { 'if-match': ifMatch }), 'If-Match');
      expectMalformed(await del(alice, planet.id, { 'if-match': ifMatch }), 'If-Match');
    }
    const after = await get(planet.id);
    expect(after.json()).toEqual(current.json());
    expect(after.headers.etag).toBe(etag);
    // A list holds when any of its tags is current.
    expect((await put(alice, planet.id, { name: 'Listed' }, { 'if-match': `${stale}, ${etag}` })).statusCode).toBe(200);
  });

  it('keeps the behaviour without If-Match: an unconditional replace', async () => {
    const planet = await createPlanet(t, alice);
    await put(alice, planet.id, { name: 'First' });
    expect((await put(alice, planet.id, { name: 'Second' })).statusCode).toBe(200);
    expect((await get(planet.id)).json().name).toBe('Second');
  });

  it('answers 403 and 404 before looking at If-Match', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await put(bob, planet.id, { name: 'Stolen' }, { 'if-match': '"stale"' }), 403);
    expectProblem(await put(alice, 2147483647, { name: 'Nowhere' }, { 'if-match': '*' }), 404);
  });

  it('lets exactly one of two editors holding the same ETag win, whatever their timing, and never wipes the winner', async () => {
    for (let round = 0; round < 5; round++) {
      const planet = await createPlanet(t, alice, { description: 'Original', tags: ['start'] });
      const etag = await etagOf(planet.id);
      const edits = [
        { name: `Alpha ${round}`, description: 'Edited by the first editor', tags: ['alpha'] },
        { name: `Beta ${round}`, tags: ['beta'] },
      ];
      const answers = await Promise.all(edits.map((edit) => put(alice, planet.id, edit, { 'if-match': etag })));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.statusCode === 200)!;
      const loser = answers.find((a) => a.statusCode === 412)!;
      expectPreconditionFailed(loser);
      const final = await get(planet.id);
      expect(final.json()).toEqual(winner.json());
      expect(final.headers.etag).toBe(winner.headers.etag);
      const won = edits[answers.indexOf(winner)];
      expect(final.json()).toMatchObject({ name: won.name, tags: won.tags, description: won.description ?? null });
    }
  });
});

describe('DELETE /planets/{planetId} with If-Match', () => {
  it('deletes only while the planet is as the client read it', async () => {
    const planet = await createPlanet(t, alice);
    const stale = await etagOf(planet.id);
    await createSatellite(t, alice, planet.id);
    expectPreconditionFailed(await del(alice, planet.id, { 'if-match': stale }));
    expect((await get(planet.id)).statusCode).toBe(200);
    expect((await del(alice, planet.id, { 'if-match': await etagOf(planet.id) })).statusCode).toBe(204);
    expect((await get(planet.id)).statusCode).toBe(404);
    expectProblem(await del(alice, planet.id, { 'if-match': '*' }), 404);
  });

  it('lets one of two deletes holding the same ETag through, and refuses a change racing a delete', async () => {
    const planet = await createPlanet(t, alice);
    const etag = await etagOf(planet.id);
    const [deleted, changed] = await Promise.all([
      del(alice, planet.id, { 'if-match': etag }),
      put(alice, planet.id, { name: 'Late' }, { 'if-match': etag }),
    ]);
    expect([deleted.statusCode, changed.statusCode].sort()).toEqual(
      deleted.statusCode === 204 ? [204, 404] : [200, 412],
    );
  });
});

describe('PUT and DELETE with If-None-Match (RFC 9110, section 13.1.2)', () => {
  it('refuses `*` or the current ETag (weak, gzip or in a list) with 412 and changes nothing; another ETag passes', async () => {
    const planet = await createPlanet(t, alice, { description: 'Kept' });
    const current = await get(planet.id);
    const etag = String(current.headers.etag);
    for (const ifNoneMatch of ['*', etag, `W/${etag}`, `"x", ${etag}`, `${etag.slice(0, -1)}-gzip"`]) {
      expectPreconditionFailed(await put(alice, planet.id, { name: 'Overwritten' }, { 'if-none-match': ifNoneMatch }));
      expectPreconditionFailed(await del(alice, planet.id, { 'if-none-match': ifNoneMatch }));
    }
    expect((await get(planet.id)).json()).toEqual(current.json());
    expect((await put(alice, planet.id, { name: 'Changed' }, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    expect((await del(alice, planet.id, { 'if-none-match': etag })).statusCode).toBe(204);
  });

  it('refuses a malformed If-None-Match with 400 rather than changing the planet unconditionally', async () => {
    const planet = await createPlanet(t, alice, { description: 'Kept' });
    const current = await get(planet.id);
    for (const ifNoneMatch of [...malformed(String(current.headers.etag)), '*, "x"']) {
      const changed = await put(alice, planet.id, { name: 'Overwritten' }, { 'if-none-match': ifNoneMatch });
      expectMalformed(changed, 'If-None-Match');
      expectMalformed(await del(alice, planet.id, { 'if-none-match': ifNoneMatch }), 'If-None-Match');
    }
    expect((await get(planet.id)).json()).toEqual(current.json());
  });

  it('checks If-Match first, then If-None-Match', async () => {
    const planet = await createPlanet(t, alice);
    const etag = await etagOf(planet.id);
    const both = await put(alice, planet.id, { name: 'Both' }, { 'if-match': etag, 'if-none-match': '*' });
    expect(expectProblem(both, 412).detail).toMatch(/If-None-Match/);
    const stale = await put(alice, planet.id, { name: 'Stale' }, { 'if-match': '"stale"', 'if-none-match': '"x"' });
    expect(expectProblem(stale, 412).detail).toMatch(/If-Match\./);
  });

  it('answers 403 and 404 before looking at If-None-Match: `*` on a missing planet is true', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await put(bob, planet.id, { name: 'Stolen' }, { 'if-none-match': '*' }), 403);
    expectProblem(await put(alice, 2147483647, { name: 'Nowhere' }, { 'if-none-match': '*' }), 404);
    expectProblem(await del(alice, 2147483647, { 'if-none-match': '*' }), 404);
  });
});

describe('compressed representations', () => {
  it('tag a gzip body as its own representation, which If-None-Match names for gzip only and If-Match for any', async () => {
    const planet = await createPlanet(t, alice, { description: 'x'.repeat(1500) });
    const plain = await get(planet.id);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzipped = await get(planet.id, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/accept-encoding/i);
    expect(gzipped.headers.etag).toBe(`${String(plain.headers.etag).slice(0, -1)}-gzip"`);
    expect(JSON.parse(gunzipSync(gzipped.rawPayload).toString('utf8'))).toEqual(plain.json());

    const revalidated = await get(planet.id, {
      'accept-encoding': 'gzip',
      'if-none-match': String(gzipped.headers.etag),
    });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers.etag).toBe(gzipped.headers.etag);
    expect(revalidated.headers.vary).toMatch(/accept-encoding/i);
    const uncoded = await get(planet.id, { 'if-none-match': String(gzipped.headers.etag) });
    expect({ status: uncoded.statusCode, etag: uncoded.headers.etag }).toEqual({
      status: 200,
      etag: plain.headers.etag,
    });

    expect(
      (await put(alice, planet.id, { name: 'Zipped' }, { 'if-match': String(gzipped.headers.etag) })).statusCode,
    ).toBe(200);
    expectPreconditionFailed(
      await put(alice, planet.id, { name: 'Stale' }, { 'if-match': String(gzipped.headers.etag) }),
    );
  });
});

describe('the OpenAPI document', () => {
  it('declares ETag, the conditional headers, 304 and 412', async () => {
    const doc = (await t.request({ method: 'GET', url: '/docs-json' })).json();
    const item = doc.paths['/planets/{planetId}'];
    const headerParams = (operation: { parameters: { in: string; name: string }[] }) =>
      operation.parameters.filter((p) => p.in === 'header').map((p) => p.name);
    expect(headerParams(item.get)).toEqual(['If-None-Match', 'If-Match']);
    expect(headerParams(item.put)).toEqual(['If-Match', 'If-None-Match']);
    expect(headerParams(item.delete)).toEqual(['If-Match', 'If-None-Match']);
    // Besides the X-Request-ID every response declares.
    expect(Object.keys(item.get.responses['200'].headers)).toEqual(['ETag', 'X-Request-ID']);
    expect(Object.keys(item.get.responses['304'].headers)).toEqual(['ETag', 'X-Request-ID']);
    expect(Object.keys(item.put.responses['200'].headers)).toEqual(['ETag', 'X-Request-ID']);
    for (const operation of [item.put, item.delete]) {
      expect(
        operation.responses['412'].content['application/problem+json'].examples['precondition-failed'].value,
      ).toMatchObject({
        type: '/problems/precondition-failed',
        title: 'Precondition failed',
        status: 412,
      });
    }
  });
});
