import { connect } from 'node:net';

import { UPLOADS_PER_USER, UploadSlots } from '../../src/celestial-bodies/upload-slots';
import { expectExampleAnswer } from '../support/problem-examples';
import { expectProblem } from '../support/problems';
import { startTestApp, type TestApp } from '../support/test-app';
import { newUser, type UserFixture } from '../support/users';
import { createPlanet, fixture, multipart } from './planets-support';

// Uploads cost memory while they are stored (UPLOAD_CONCURRENCY at once) and a socket while
// they arrive. Slow clients must not keep other users' uploads out, and a client that stops
// sending must not keep its upload open until REQUEST_TIMEOUT_MS.

const UPLOAD_CONCURRENCY = 2;
const IDLE_TIMEOUT_MS = 3000;
/** Far below IDLE_TIMEOUT_MS, so a trickling client is never taken for a stalled one. */
const TRICKLE_EVERY_MS = 200;
/** A client that is never answered fails the test after this long, instead of hanging it. */
const GIVE_UP_MS = 20_000;

const PNG = fixture('mars.png');

let t: TestApp;
let alice: UserFixture;
let port: number;

beforeAll(async () => {
  t = await startTestApp({
    UPLOAD_CONCURRENCY: String(UPLOAD_CONCURRENCY),
    UPLOAD_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
  });
  alice = await newUser(t);
  await t.app.listen(0, '127.0.0.1');
  port = (t.app.getHttpServer().address() as { port: number }).port;
});
afterAll(async () => t?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface RawAnswer {
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseAnswer(text: string): RawAnswer {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { text, status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

interface RawUpload {
  /** What the server answered, once it closed the connection. */
  response: Promise<RawAnswer>;
  /** Stops trickling and sends the rest of the body at once. */
  finish: () => void;
}

/**
 * An upload over a real connection: the request head and the multipart head of the file
 * arrive at once, then the file a byte every TRICKLE_EVERY_MS (or, with `stall`, nothing
 * more) until `finish` is called.
 */
function rawUpload(user: UserFixture, planetId: number, { stall = false } = {}): RawUpload {
  const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: PNG }]);
  const socket = connect(port, '127.0.0.1');
  const head = [
    `POST /planets/${planetId}/image HTTP/1.1`,
    'Host: localhost',
    `Authorization: ${user.basic}`,
    `Content-Type: ${form.headers['content-type']}`,
    `Content-Length: ${form.payload.length}`,
    'Connection: close',
  ].join('\r\n');
  let sent = form.payload.indexOf('\r\n\r\n') + 4;
  socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), form.payload.subarray(0, sent)]));
  const trickle = stall
    ? undefined
    : setInterval(() => {
        // The last bytes are kept for finish(): the body never ends by trickling alone.
        if (sent < form.payload.length - 10 && socket.writable) socket.write(form.payload.subarray(sent, ++sent));
      }, TRICKLE_EVERY_MS);
  let text = '';
  socket.on('data', (chunk) => (text += String(chunk)));
  const response = new Promise<RawAnswer>((resolve, reject) => {
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close within ${GIVE_UP_MS} ms; got: ${JSON.stringify(text)}`));
    }, GIVE_UP_MS);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      clearTimeout(giveUp);
      resolve(parseAnswer(text));
    });
  });
  return {
    response,
    finish: () => {
      clearInterval(trickle);
      if (socket.writable) socket.write(form.payload.subarray(sent));
    },
  };
}

const quickUpload = (user: UserFixture, planetId: number) => {
  const form = multipart([{ name: 'image', filename: 'mars.png', type: 'image/png', content: PNG }]);
  return t.request({
    method: 'POST',
    url: `/planets/${planetId}/image`,
    headers: { ...form.headers, authorization: user.basic },
    payload: form.payload,
  });
};

/** Until the server is reading `count` uploads (their handlers run; the bodies arrive). */
async function untilUploading(count: number) {
  const slots = t.app.get(UploadSlots);
  const deadline = Date.now() + 15_000;
  while (slots.uploading < count && Date.now() < deadline) await sleep(10);
  expect(slots.uploading).toBe(count);
}

async function userWithPlanet(): Promise<{ user: UserFixture; planetId: number }> {
  const user = await newUser(t);
  return { user, planetId: (await createPlanet(t, user)).id };
}

it('lets a user upload at once while more clients than UPLOAD_CONCURRENCY trickle their uploads', async () => {
  const trickling = await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY + 1 }, () => userWithPlanet()));
  const mine = (await createPlanet(t, alice)).id;
  const slow = trickling.map(({ user, planetId }) => rawUpload(user, planetId));
  try {
    await untilUploading(trickling.length);
    const res = await quickUpload(alice, mine);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  } catch (err) {
    // An unfinished upload would hold the server's close.
    slow.forEach((upload) => upload.finish());
    throw err;
  }
  // Slow is not refused: each is stored once it has arrived (one after the other, as more
  // arriving in the same instant than there are slots would be refused, like fast ones).
  for (const upload of slow) {
    upload.finish();
    expect((await upload.response).status).toBe(200);
  }
});

it(`refuses a user's upload past ${UPLOADS_PER_USER} of theirs in progress with 429 and Retry-After, and not other users'`, async () => {
  const { user: bob, planetId } = await userWithPlanet();
  const slow = [rawUpload(bob, planetId), rawUpload(bob, planetId)];
  try {
    await untilUploading(UPLOADS_PER_USER);
    const refused = await quickUpload(bob, planetId);
    expectProblem(refused, 429, 'too-many-requests');
    expectExampleAnswer(refused.json(), 'POST /planets/{planetId}/image 429 too-many-requests');
    expect(refused.headers['retry-after']).toBe('1');
    // A limit on uploads at once, not on a window: its quota is in concurrent requests.
    expect(refused.headers['ratelimit-policy']).toBe(`"uploads";q=${UPLOADS_PER_USER};qu="concurrent-requests"`);
    expect(refused.headers.ratelimit).toBe('"uploads";r=0;t=1');
    expect((await quickUpload(alice, (await createPlanet(t, alice)).id)).statusCode).toBe(200);
  } finally {
    slow.forEach((upload) => upload.finish());
  }
  for (const upload of slow) expect((await upload.response).status).toBe(200);
  expect((await quickUpload(bob, planetId)).statusCode).toBe(200);
});

it('cuts an upload whose body stops arriving after UPLOAD_IDLE_TIMEOUT_MS with a 408 problem, and closes its connection', async () => {
  const { user, planetId } = await userWithPlanet();
  // REQUEST_TIMEOUT_MS is 60 s here: a 408 within GIVE_UP_MS is the idle limit's.
  const answer = await rawUpload(user, planetId, { stall: true }).response;
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status: 408 });
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers.connection).toBe('close');
  expect(JSON.parse(answer.body)).toMatchObject({
    status: 408,
    type: '/problems/request-timeout',
    detail: `No data of the request body arrived for ${IDLE_TIMEOUT_MS} ms; send it without pausing.`,
  });
  expectExampleAnswer(JSON.parse(answer.body), 'POST /planets/{planetId}/image 408 request-timeout');
  // Nothing of it is left held: the user's next upload is taken.
  expect((await quickUpload(user, planetId)).statusCode).toBe(200);
});

it('refuses an upload that has arrived while UPLOAD_CONCURRENCY uploads are being stored with 503 and Retry-After', async () => {
  const planet = (await createPlanet(t, alice)).id;
  const slots = t.app.get(UploadSlots);
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  // Stand-ins for writes to PostgreSQL that take their time.
  const held = Array.from({ length: UPLOAD_CONCURRENCY }, () => slots.store(() => released));
  try {
    expect(slots.available).toBe(0);
    const refused = await quickUpload(alice, planet);
    expectProblem(refused, 503, 'unavailable');
    expect(refused.headers['retry-after']).toBe('1');
  } finally {
    release();
    await Promise.all(held);
  }
  expect((await quickUpload(alice, planet)).statusCode).toBe(200);
});

it('gives the slots back when an upload is refused (not an image)', async () => {
  const planet = (await createPlanet(t, alice)).id;
  const notAnImage = multipart([
    { name: 'image', filename: 'x.png', type: 'image/png', content: fixture('not-an-image.txt') },
  ]);
  for (let i = 0; i < 4; i++) {
    const res = await t.request({
      method: 'POST',
      url: `/planets/${planet}/image`,
      headers: { ...notAnImage.headers, authorization: alice.basic },
      payload: notAnImage.payload,
    });
    expectProblem(res, 400);
  }
  expect(t.app.get(UploadSlots).uploading).toBe(0);
  expect((await quickUpload(alice, planet)).statusCode).toBe(200);
});
