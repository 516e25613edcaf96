import { connect } from 'node:net';
import { UploadSlots } from '../../src/celestial-bodies/upload-slots';
import { startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';
import { expectProblem } from '../support/problems';
import { createPlanet, fixture, multipart } from './planets-support';

// A burst of 5 MiB uploads must not each hold their image in memory at once: past
// UPLOAD_CONCURRENCY uploads in progress, the next is refused at once.

const PNG = fixture('mars.png');

let t: TestApp;
let alice: UserFixture;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ UPLOAD_CONCURRENCY: '2' });
  alice = await newUser(t);
  await t.app.listen(0, '127.0.0.1');
  port = (t.app.getHttpServer().address() as { port: number }).port;
});
afterAll(async () => t.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An upload over a real connection whose body stops halfway until `finish` is called, as
 * from a slow client; `response` is the raw HTTP answer.
 */
function slowUpload(planetId: number): { response: Promise<string>; finish: () => void } {
  const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: PNG }]);
  const socket = connect(port, '127.0.0.1');
  const head = [
    `POST /planets/${planetId}/image HTTP/1.1`,
    'Host: localhost',
    `Authorization: ${alice.basic}`,
    `Content-Type: ${form.headers['content-type']}`,
    `Content-Length: ${form.payload.length}`,
    'Connection: close',
  ].join('\r\n');
  const half = Math.floor(form.payload.length / 2);
  socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), form.payload.subarray(0, half)]));
  let answer = '';
  socket.on('data', (chunk) => (answer += String(chunk)));
  const response = new Promise<string>((resolve, reject) => {
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
  return { response, finish: () => socket.write(form.payload.subarray(half)) };
}

const quickUpload = (planetId: number) => {
  const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: PNG }]);
  return t.request({ method: 'POST', url: `/planets/${planetId}/image`, headers: { ...form.headers, authorization: alice.basic }, payload: form.payload });
};

it('refuses an upload past UPLOAD_CONCURRENCY in progress with 503 and Retry-After, and takes it once one ends', async () => {
  const planets = [];
  for (let i = 0; i < 3; i++) planets.push((await createPlanet(t, alice, { name: `Upload ${i}` })).id);
  const slow = [slowUpload(planets[0]), slowUpload(planets[1])];
  try {
    // Until both handlers hold their slots (they are reading the bodies by then).
    const slots = t.app.get(UploadSlots);
    const deadline = Date.now() + 15_000;
    while (slots.available > 0 && Date.now() < deadline) await sleep(10);
    const refused = await quickUpload(planets[2]);
    expectProblem(refused, 503, 'unavailable');
    expect(refused.headers['retry-after']).toBe('1');

    slow[0].finish();
    expect(await slow[0].response).toMatch(/^HTTP\/1.1 200 /);
    expect((await quickUpload(planets[2])).statusCode).toBe(200);
  } finally {
    // Also when an expectation failed: an unfinished upload would hold the server's close.
    slow.forEach((upload) => upload.finish());
  }
  expect(await slow[1].response).toMatch(/^HTTP\/1.1 200 /);
});

it('gives the slot back when an upload is refused (not an image, too large)', async () => {
  const planet = (await createPlanet(t, alice)).id;
  const notAnImage = multipart([{ name: 'image', filename: 'x.png', type: 'image/png', content: fixture('not-an-image.txt') }]);
  for (let i = 0; i < 4; i++) {
    const res = await t.request({ method: 'POST', url: `/planets/${planet}/image`, headers: { ...notAnImage.headers, authorization: alice.basic }, payload: notAnImage.payload });
    expectProblem(res, 400);
  }
  expect((await quickUpload(planet)).statusCode).toBe(200);
});
