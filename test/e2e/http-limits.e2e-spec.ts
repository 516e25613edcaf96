import { rmSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { jest } from '@jest/globals';

import { freePort, RunningProcess, startProcess } from '../support/processes';
import { startTestApp, TestApp } from '../support/test-app';
import { migratedDataDir } from '../support/test-database';
import { newUser } from '../support/users';

// What only a real socket shows: clients that never finish their request, and requests
// Node's HTTP parser used to answer itself.

const REQUEST_TIMEOUT_MS = 1000;
/** A client that is never answered fails the test after this long, instead of hanging it. */
const GIVE_UP_MS = 15_000;

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  await t.app.listen(0, '127.0.0.1');
  port = (t.app.getHttpServer().address() as { port: number }).port;
});
afterAll(async () => t?.close());

interface RawAnswer {
  /** Everything the server wrote before it closed the connection. */
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `raw` to a new connection and collects what comes back until the server closes it. */
function exchange(raw: string, keepSending?: (socket: Socket) => void): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close within ${GIVE_UP_MS} ms; got: ${JSON.stringify(text)}`));
    }, GIVE_UP_MS);
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ text, status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(raw);
    keepSending?.(socket);
  });
}

/** The responses in `text`, one after another, each read to the end of its Content-Length. */
function responsesIn(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new Error(`a response cut off in its head: ${JSON.stringify(rest)}`);
    const [statusLine, ...headerLines] = rest.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      headerLines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    const end = headEnd + 4 + Number(headers['content-length'] ?? 0);
    answers.push({
      text: rest.slice(0, end),
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.slice(headEnd + 4, end),
    });
    rest = rest.slice(end);
  }
  return answers;
}

function expectRawProblem(answer: RawAnswer, status: number) {
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status });
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(JSON.parse(answer.body)).toMatchObject({
    status,
    type: expect.stringMatching(/^\/problems\/[a-z-]+$/),
    detail: expect.any(String),
  });
}

describe('a client that stops sending', () => {
  it('gets a 408 problem, and its connection closed, when its body never ends', async () => {
    const answer = await exchange(
      'POST /user/signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":',
    );
    expectRawProblem(answer, 408);
  });

  it('gets a 408 problem when its headers never end', async () => {
    expectRawProblem(await exchange('GET /planets HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n'), 408);
  });

  it('is cut off even while it trickles bytes, as its whole request has one deadline', async () => {
    let timer: NodeJS.Timeout | undefined;
    const answer = await exchange(
      'POST /user/signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n',
      (socket) => {
        timer = setInterval(() => socket.writable && socket.write(' '), 100);
      },
    );
    clearInterval(timer);
    expectRawProblem(answer, 408);
  });

  it('does not hold up other clients, whose requests are answered meanwhile', async () => {
    const slow = exchange(
      'POST /user/signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{',
    );
    const quick = await exchange('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(quick.status).toBe(200);
    expectRawProblem(await slow, 408);
  });
});

describe('the request time limit, on the real server', () => {
  // Node looks for late requests on a timer; left at its default spacing (a quarter of the
  // limit, up to 30 s) a client was cut 4 to 15 s late. The limit here is long enough that
  // the old spacing (2 s) would show.
  const LIMIT_MS = 8000;
  // The clients start half a second apart over 2 s, so whatever the timer's phase, checks 2 s
  // apart would cut one of them at least 1.5 s late: that fails every try. A loaded machine
  // (both CI passes run the suite in parallel) once starved the server for a second; a second
  // try tells such a pause from a timer that is too slow.
  jest.retryTimes(1, { logErrorsBeforeRetry: true });
  let server: RunningProcess;
  let serverPort: number;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = migratedDataDir('rk-limits-');
    serverPort = await freePort();
    server = startProcess('dist/src/main.js', [], {
      DATA_DIR: dataDir,
      PORT: String(serverPort),
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      INITIAL_REGION_API_KEY: 'operator-chosen-initial-key-0123456789abcdef',
      REQUEST_TIMEOUT_MS: String(LIMIT_MS),
    });
    await server.waitFor(/Serving on/);
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Milliseconds from the first byte of an unfinished request to the server closing the connection. */
  const cutAfter = (raw: string) =>
    new Promise<number>((resolve) => {
      const socket = connect(serverPort, '127.0.0.1');
      const started = Date.now();
      socket.on('error', () => undefined);
      // Read (and drop) the 408: a socket nobody reads never sees the server's close.
      socket.resume();
      socket.on('close', () => resolve(Date.now() - started));
      socket.write(raw);
    });

  it('cuts a client that has not sent its whole request within a second of REQUEST_TIMEOUT_MS', async () => {
    const unfinished = [
      'GET /planets HTTP/1.1\r\nHost: localhost\r\n',
      'POST /user/signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      'GET /pla',
      'GET /planets HTTP/1.1\r\nHost: loc',
    ];
    const cuts = await Promise.all(
      unfinished.map(async (raw, i) => {
        await sleep(i * 500);
        return cutAfter(raw);
      }),
    );
    for (const ms of cuts) {
      expect(ms).toBeGreaterThanOrEqual(LIMIT_MS - 50);
      expect(ms).toBeLessThan(LIMIT_MS + 1000);
    }
  }, 30_000);
});

describe('a request without Host', () => {
  it('is a 400 problem naming the header, not an empty 400', async () => {
    const answer = await exchange('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectRawProblem(answer, 400);
    expect(JSON.parse(answer.body).errors).toEqual([
      { field: 'Host', message: 'An HTTP/1.1 request must have a Host header' },
    ]);
  });

  it('is served over HTTP/1.0, which has no Host', async () => {
    const answer = await exchange('GET /health HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
  });

  it('over HTTP/1.0 gets an absolute Location, under the address it connected to', async () => {
    const body = JSON.stringify({ email: `no-host-${Date.now()}@example.com`, password: 'password-1' });
    const answer = await exchange(
      `POST /user/signup HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(201);
    expect(answer.headers.location).toBe(`http://127.0.0.1:${port}/me`);
  });
});

describe('a request with two Host lines', () => {
  it.each([
    ['HTTP/1.1', 'Host: good.example\r\nHost: user@evil.example/x'],
    ['HTTP/1.0', 'Host: good.example\r\nhost: good.example'],
  ])('is a 400 problem naming the header, over %s', async (version, hosts) => {
    const answer = await exchange(`GET /health ${version}\r\n${hosts}\r\nConnection: close\r\n\r\n`);
    expectRawProblem(answer, 400);
    expect(JSON.parse(answer.body).errors).toEqual([
      { field: 'Host', message: 'A request must have exactly one Host header' },
    ]);
  });
});

describe('a request with two Authorization lines', () => {
  it.each([
    ['Basic first', 'Authorization: Basic YTpi\r\nAuthorization: Bearer junk'],
    ['Bearer first', 'Authorization: Bearer junk\r\nauthorization: Basic YTpi'],
  ])('is a 400 problem naming the header, %s: which one authenticates is not left to their order', async (_, lines) => {
    const answer = await exchange(`GET /me HTTP/1.1\r\nHost: localhost\r\n${lines}\r\nConnection: close\r\n\r\n`);
    expectRawProblem(answer, 400);
    expect(JSON.parse(answer.body).errors).toEqual([
      { field: 'Authorization', message: 'A request may carry one Authorization header' },
    ]);
  });
});

describe('a request the HTTP parser refuses', () => {
  it('gets a 431 with an instance, as every other problem has', async () => {
    const answer = await exchange(`GET /planets HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expectRawProblem(answer, 431);
    expect(JSON.parse(answer.body).instance).toBe('/planets');
  });

  it('gets a 400 naming Idempotency-Key when that header holds a control character', async () => {
    const answer = await exchange(
      'POST /planets HTTP/1.1\r\nHost: localhost\r\nIdempotency-Key: retry\u00011\r\nContent-Length: 2\r\n\r\n{}',
    );
    expectRawProblem(answer, 400);
    expect(JSON.parse(answer.body)).toMatchObject({
      instance: '/planets',
      errors: [{ field: 'Idempotency-Key', message: 'Idempotency-Key must not contain control characters' }],
    });
  });
});

describe('a request followed on its connection by bytes the HTTP parser refuses', () => {
  /** The answers in order, the refusal last: its request line is not the first of the bytes read. */
  function expectRefusalAfter(answers: RawAnswer[], ...statuses: number[]) {
    expect(answers.map((answer) => answer.status)).toEqual([...statuses, 400]);
    const refusal = answers[answers.length - 1];
    expectRawProblem(refusal, 400);
    expect(JSON.parse(refusal.body)).toMatchObject({
      type: '/problems/bad-request',
      instance: `urn:uuid:${refusal.headers['x-request-id']}`,
    });
  }

  it('answers and logs the request in full, then the refusal, then closes the connection', async () => {
    const alice = await newUser(t);
    const body = '{"name":"Pipelined"}';
    const answer = await exchange(
      `POST /planets HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${alice.basic}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}BROKEN\r\n\r\n`,
    );
    const answers = responsesIn(answer.text);
    expectRefusalAfter(answers, 201);
    expect(JSON.parse(answers[0].body)).toMatchObject({ name: 'Pipelined' });
    const logged = t.logs
      .map((line) => JSON.parse(line))
      .find((line) => line.requestId === answers[0].headers['x-request-id']);
    expect(logged).toMatchObject({ msg: 'request completed', res: { statusCode: 201 } });
  });

  it('answers a GET, then the refusal', async () => {
    const answer = await exchange('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\nGARBAGE\r\n\r\n');
    expectRefusalAfter(responsesIn(answer.text), 200);
  });

  it('answers every request queued before the refused bytes, in order, before the refusal', async () => {
    const alice = await newUser(t);
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${alice.basic}\r\n\r\n`;
    const answer = await exchange(`${get('/planets')}${get('/nowhere')}${get('/health/live')}GARBAGE\r\n\r\n`);
    expectRefusalAfter(responsesIn(answer.text), 200, 404, 200);
  });
});
