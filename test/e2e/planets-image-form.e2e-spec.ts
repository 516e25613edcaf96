import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

import type { InjectOptions, Response } from 'light-my-request';

import { startTestApp, TestApp } from '../support/test-app';
import { newUser, UserFixture } from '../support/users';
import { createPlanet, expectProblem, fixture, multipart } from './planets-support';

// Upload bodies a hostile-input review sent: broken multipart, extra parts, tiny "images".

const PNG = fixture('mars.png');
const JPEG = fixture('jupiter.jpg');

let t: TestApp;
let request: (options: InjectOptions) => Promise<Response>;
let alice: UserFixture;

beforeAll(async () => {
  t = await startTestApp();
  request = (options) => t.request(options);
  alice = await newUser(t, { name: 'Alice' });
});
afterAll(async () => t?.close());

const unhandled = () => t.logs.filter((line) => line.includes('Unhandled error'));

function post(planetId: number, headers: Record<string, string>, payload: Buffer) {
  return request({
    method: 'POST',
    url: `/planets/${planetId}/image`,
    headers: { ...headers, authorization: alice.basic },
    payload,
  });
}

type Part = Parameters<typeof multipart>[0][number];
const upload = (planetId: number, parts: Part[]) => {
  const form = multipart(parts);
  return post(planetId, form.headers, form.payload);
};
const image = (content: Buffer, name = 'image'): Part => ({
  name,
  filename: 'upload.bin',
  type: 'application/octet-stream',
  content,
});
const text = (name: string, content = 'x'): Part => ({ name, content });

/** Expects a 400 naming `field`, and the planet's image still `kept` (or none). */
async function expectRefused(res: Response, planetId: number, field: string, kept: Buffer | null) {
  expectProblem(res, 400, field);
  const served = await request({ method: 'GET', url: `/planets/${planetId}/image` });
  if (kept) expect(served.rawPayload.equals(kept)).toBe(true);
  else expect(served.statusCode).toBe(404);
}

describe('a multipart body that ends early', () => {
  const boundary = 'XyZb';
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  const partHeader = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="j.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;

  it.each([
    [
      'half a JPEG and no closing boundary',
      Buffer.concat([Buffer.from(partHeader), JPEG.subarray(0, JPEG.length >> 1)]),
    ],
    [
      'the whole JPEG, then a boundary without its final "--"',
      Buffer.concat([Buffer.from(partHeader), JPEG, Buffer.from(`\r\n--${boundary}`)]),
    ],
    ['the whole JPEG, then nothing', Buffer.concat([Buffer.from(partHeader), JPEG])],
    ['only part of a part header', Buffer.from(partHeader.slice(0, 30))],
  ])('is refused with a 400, not a 500: %s', async (_, payload) => {
    const planet = await createPlanet(t, alice);
    await expectRefused(await post(planet.id, headers, payload), planet.id, 'image', null);
    expect(unhandled()).toEqual([]);
  });

  it('is refused with a 400 when the multipart type has no boundary', async () => {
    const planet = await createPlanet(t, alice);
    const form = multipart([image(PNG)]);
    expectProblem(await post(planet.id, { 'content-type': 'multipart/form-data' }, form.payload), 400);
    expect(unhandled()).toEqual([]);
  });

  it('from a client that goes away mid-upload is logged as a client problem, not an error', async () => {
    const planet = await createPlanet(t, alice);
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /planets/${planet.id}/image HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${alice.basic}\r\n` +
        `Content-Type: ${headers['content-type']}\r\nContent-Length: 100000\r\n\r\n${partHeader}`,
    );
    socket.write(JPEG.subarray(0, 40));
    // Long enough for the handler to be reading the file when the connection drops.
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    const deadline = Date.now() + 5000;
    while (!t.logs.some((line) => line.includes('Upload aborted by the client')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Written through the request's own logger (request.log): the request id is on the line.
    expect(t.logs.filter((line) => line.includes('Upload aborted by the client'))).toEqual([
      expect.stringMatching(/"requestId":"[^"]+"/),
    ]);
    expect(unhandled()).toEqual([]);
    expect(t.logs.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
  });
});

describe('a form with any part besides the one file in "image"', () => {
  it.each([
    ['a second image file', [image(PNG), image(JPEG)], 'image'],
    ['a file in another field after the image', [image(PNG), image(JPEG, 'other')], 'other'],
    ['a file in another field before the image', [image(JPEG, 'other'), image(PNG)], 'other'],
    ['a text field before the image', [text('note'), image(PNG)], 'note'],
    ['a text field after the image', [image(PNG), text('note')], 'note'],
    ['50 text fields before the image', [...Array.from({ length: 50 }, (_, i) => text(`f${i}`)), image(PNG)], 'f0'],
    ['"image" as a text field before the file', [text('image', 'mars.png'), image(PNG)], 'image'],
    ['a large text field after the image', [image(PNG), text('note', 'x'.repeat(2 * 1024 * 1024))], 'note'],
  ])('is refused with a 400 naming the part: %s', async (_, parts, field) => {
    const planet = await createPlanet(t, alice);
    await upload(planet.id, [image(JPEG)]);
    await expectRefused(await upload(planet.id, parts), planet.id, field, JPEG);
    expect(unhandled()).toEqual([]);
  });

  it('still takes the file alone', async () => {
    const planet = await createPlanet(t, alice);
    expect((await upload(planet.id, [image(PNG)])).statusCode).toBe(200);
  });
});

describe('a file that starts like an image but cannot be one', () => {
  it.each([
    ['the 3 bytes of a JPEG start (FF D8 FF)', Buffer.from([0xff, 0xd8, 0xff])],
    ['a JPEG start and a marker, 20 bytes in all', JPEG.subarray(0, 20)],
    [
      'a JPEG start whose next byte is not a marker',
      Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0x00]), JPEG.subarray(4)]),
    ],
    ['the 8-byte PNG signature', PNG.subarray(0, 8)],
    ['a PNG signature and IHDR only', PNG.subarray(0, 33)],
    [
      'a PNG signature followed by another chunk than IHDR',
      Buffer.concat([PNG.subarray(0, 12), Buffer.from('IDAT'), PNG.subarray(16)]),
    ],
    ['a GIF signature only', Buffer.from('GIF89a')],
    [
      'a RIFF WEBP header without a VP8 chunk',
      Buffer.concat([Buffer.from('RIFF\x1a\x00\x00\x00WEBPJUNK', 'latin1'), Buffer.alloc(20)]),
    ],
  ])('is refused with a 400: %s', async (_, bytes) => {
    const planet = await createPlanet(t, alice);
    await expectRefused(await upload(planet.id, [image(bytes)]), planet.id, 'image', null);
  });
});
