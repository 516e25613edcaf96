import type { InjectOptions, Response } from 'light-my-request';

import type { TestApp } from '../support/test-app';
import type { UserFixture } from '../support/users';
import { createPlanet, expectProblem, fixture, ISO, multipart, startWithAliceAndBob } from './planets-support';

const MAX = 5 * 1024 * 1024;
const PNG = fixture('mars.png');
const JPEG = fixture('jupiter.jpg');
// The signature and the IHDR chunk: the start a file needs to be taken for a PNG.
const PNG_HEADER = PNG.subarray(0, 33);

let t: TestApp;
let alice: UserFixture;
let bob: UserFixture;

beforeAll(async () => {
  ({ t, alice, bob } = await startWithAliceAndBob());
});
afterAll(async () => t?.close());

const request = (options: InjectOptions): Promise<Response> => t.request(options);

function upload(
  user: UserFixture | null,
  planetId: number | string,
  file: Buffer,
  options: { field?: string; filename?: string; type?: string } = {},
) {
  const form = multipart([
    {
      name: options.field ?? 'image',
      filename: options.filename ?? 'upload.bin',
      type: options.type ?? 'application/octet-stream',
      content: file,
    },
  ]);
  return request({
    method: 'POST',
    url: `/planets/${planetId}/image`,
    headers: { ...form.headers, ...(user ? { authorization: user.basic } : {}) },
    payload: form.payload,
  });
}
const getImage = (planetId: number, headers: Record<string, string> = {}) =>
  request({ method: 'GET', url: `/planets/${planetId}/image`, headers });

describe('POST /planets/{planetId}/image', () => {
  it.each([
    ['a PNG', 'mars.png', 'image/png'],
    ['a JPEG', 'jupiter.jpg', 'image/jpeg'],
    ['a GIF', 'neptune.gif', 'image/gif'],
    ['a WebP', 'pluto.webp', 'image/webp'],
  ])('stores %s and serves it back byte for byte, typed by its content', async (_, name, type) => {
    const planet = await createPlanet(t, alice);
    const bytes = fixture(name);
    // The declared type says nothing useful; the bytes decide.
    const res = await upload(alice, planet.id, bytes, { filename: name, type: 'application/octet-stream' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      message: 'Image uploaded successfully',
      imageUrl: `http://localhost:80/planets/${planet.id}/image`,
      uploadedAt: expect.stringMatching(ISO),
      fileSize: bytes.length,
      mimeType: type,
    });
    const served = await request({ method: 'GET', url: res.json().imageUrl });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe(type);
    expect(served.rawPayload.equals(bytes)).toBe(true);
    expect(served.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect((await request({ method: 'GET', url: `/planets/${planet.id}` })).json().image).toBe(
      `/planets/${planet.id}/image`,
    );
  });

  it('answers If-None-Match with 304 while the image is unchanged, and replaces the image on a new upload', async () => {
    const planet = await createPlanet(t, alice);
    await upload(alice, planet.id, PNG, { type: 'image/png' });
    const first = await getImage(planet.id);
    const etag = String(first.headers.etag);
    const unchanged = await getImage(planet.id, { 'if-none-match': etag });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.rawPayload.length).toBe(0);
    expect(unchanged.headers.etag).toBe(etag);
    expect((await getImage(planet.id, { 'if-none-match': `"other", W/${etag}` })).statusCode).toBe(304);

    expect((await upload(alice, planet.id, JPEG, { type: 'image/jpeg' })).statusCode).toBe(200);
    const replaced = await getImage(planet.id, { 'if-none-match': etag });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.headers['content-type']).toBe('image/jpeg');
    expect(replaced.headers.etag).not.toBe(etag);
    expect(replaced.rawPayload.equals(JPEG)).toBe(true);
  });

  it('refuses a text file that claims to be a PNG (400), keeping the previous image', async () => {
    const planet = await createPlanet(t, alice);
    await upload(alice, planet.id, PNG);
    const res = await upload(alice, planet.id, fixture('not-an-image.txt'), {
      filename: 'mars.png',
      type: 'image/png',
    });
    expectProblem(res, 400, 'image');
    expect((await getImage(planet.id)).rawPayload.equals(PNG)).toBe(true);
  });

  it('refuses an empty file and a file shorter than any image header', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await upload(alice, planet.id, Buffer.alloc(0)), 400, 'image');
    expectProblem(await upload(alice, planet.id, PNG.subarray(0, 4)), 400, 'image');
  });

  it('accepts exactly 5 MiB and refuses one byte more with 413', async () => {
    const planet = await createPlanet(t, alice);
    const atLimit = Buffer.concat([PNG_HEADER, Buffer.alloc(MAX - PNG_HEADER.length)]);
    expect((await upload(alice, planet.id, atLimit)).statusCode).toBe(200);
    const overLimit = Buffer.concat([atLimit, Buffer.from([0])]);
    const body = expectProblem(await upload(alice, planet.id, overLimit), 413);
    expect(body.type).toBe('/problems/image-too-large');
    expect((await getImage(planet.id)).rawPayload.length).toBe(MAX);
  });

  it('refuses a far larger file with 413 too', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await upload(alice, planet.id, Buffer.concat([PNG_HEADER, Buffer.alloc(12 * 1024 * 1024)])), 413);
  });

  it('answers 400 when the field "image" is missing', async () => {
    const planet = await createPlanet(t, alice);
    const url = `/planets/${planet.id}/image`;
    const empty = multipart([]);
    expectProblem(
      await request({
        method: 'POST',
        url,
        headers: { ...empty.headers, authorization: alice.basic },
        payload: empty.payload,
      }),
      400,
      'image',
    );
    expectProblem(await upload(alice, planet.id, PNG, { field: 'photo' }), 400);
    const textOnly = multipart([{ name: 'image', content: 'mars.png' }]);
    expectProblem(
      await request({
        method: 'POST',
        url,
        headers: { ...textOnly.headers, authorization: alice.basic },
        payload: textOnly.payload,
      }),
      400,
    );
  });

  it('answers 415 to any body but a form, saying to send multipart/form-data with the file in "image"', async () => {
    const planet = await createPlanet(t, alice);
    const url = `/planets/${planet.id}/image`;
    const bodies: [string, InjectOptions][] = [
      ['JSON', { headers: { authorization: alice.basic }, payload: { image: 'mars.png' } }],
      ['a raw PNG', { headers: { authorization: alice.basic, 'content-type': 'image/png' }, payload: PNG }],
      [
        'another multipart type',
        { headers: { authorization: alice.basic, 'content-type': 'multipart/mixed; boundary=x' }, payload: '--x--' },
      ],
      ['no body', { headers: { authorization: alice.basic } }],
    ];
    for (const [what, options] of bodies) {
      const body = expectProblem(await request({ method: 'POST', url, ...options }), 415);
      expect({ what, type: body.type, detail: body.detail }).toEqual({
        what,
        type: '/problems/unsupported-media-type',
        detail: expect.stringMatching(/multipart\/form-data.*"image"/),
      });
    }
    expectProblem(await getImage(planet.id), 404);
    // A route that reads JSON still asks for JSON.
    const json = expectProblem(
      await request({
        method: 'POST',
        url: '/planets',
        headers: { authorization: alice.basic, 'content-type': 'image/png' },
        payload: PNG,
      }),
      415,
    );
    expect(json.detail).toBe('Send the body as application/json.');
  });

  it('documents the form as one binary part, and the image answer as binary in each type it is sent as', async () => {
    const doc = (await request({ method: 'GET', url: '/docs-json' })).json();
    const { post, get } = doc.paths['/planets/{planetId}/image'];
    expect(Object.keys(post.requestBody.content)).toEqual(['multipart/form-data']);
    expect(post.requestBody.content['multipart/form-data'].schema).toMatchObject({
      type: 'object',
      required: ['image'],
      properties: { image: { type: 'string', format: 'binary' } },
    });
    expect(post.responses['415'].content['application/problem+json']).toBeDefined();
    const binary = { schema: { type: 'string', format: 'binary' } };
    expect(get.responses['200'].content).toEqual({
      'image/png': binary,
      'image/jpeg': binary,
      'image/gif': binary,
      'image/webp': binary,
    });
  });

  it('lets only the creator upload (403 for another user), and needs credentials (401)', async () => {
    const planet = await createPlanet(t, alice);
    expectProblem(await upload(bob, planet.id, PNG), 403);
    expectProblem(await upload(null, planet.id, PNG), 401);
    expectProblem(await getImage(planet.id), 404);
  });

  it('answers 404 for a missing planet and 400 for a bad planetId', async () => {
    expectProblem(await upload(alice, 2147483647, PNG), 404);
    expectProblem(await upload(alice, 'mars', PNG), 400, 'planetId');
  });
});

describe('GET /planets/{planetId}/image', () => {
  it('answers 404 for a planet without an image or without existence, 400 for a bad id', async () => {
    const planet = await createPlanet(t, alice);
    expect(expectProblem(await getImage(planet.id), 404).detail).toBe(`Planet ${planet.id} has no image.`);
    expect(expectProblem(await getImage(2147483647), 404).detail).toBe('No planet with id 2147483647 exists.');
    expectProblem(await request({ method: 'GET', url: '/planets/x/image' }), 400, 'planetId');
  });

  it('serves a polyglot (a GIF carrying a script and HTML) as the image it claims to be, never to be sniffed', async () => {
    // Accepted: images are recognised, not decoded. What keeps the rest of the bytes inert
    // is that they are only ever served with the image type and nosniff.
    const polyglot = Buffer.concat([
      fixture('neptune.gif'),
      Buffer.from('*/=1;alert(document.domain)//<html><script>alert(1)</script>'),
    ]);
    const planet = await createPlanet(t, alice);
    expect((await upload(alice, planet.id, polyglot, { type: 'text/html' })).statusCode).toBe(200);
    const served = await getImage(planet.id);
    expect(served.headers).toMatchObject({
      'content-type': 'image/gif',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "frame-ancestors 'none'",
    });
    expect(served.rawPayload.equals(polyglot)).toBe(true);
  });

  it('is public, and the image goes when its planet is deleted', async () => {
    const planet = await createPlanet(t, alice);
    await upload(alice, planet.id, JPEG);
    expect((await getImage(planet.id)).statusCode).toBe(200);
    expect(
      (await request({ method: 'DELETE', url: `/planets/${planet.id}`, headers: { authorization: alice.basic } }))
        .statusCode,
    ).toBe(204);
    expectProblem(await getImage(planet.id), 404);
  });
});
