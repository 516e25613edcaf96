import { connect, Socket } from 'node:net';
import { startTestApp, TestApp } from '../support/test-app';

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
afterAll(async () => t.close());

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
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ text, status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(raw);
    keepSending?.(socket);
  });
}

function expectRawProblem(answer: RawAnswer, status: number) {
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status });
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(JSON.parse(answer.body)).toMatchObject({ status, type: expect.stringMatching(/^https:\/\//), detail: expect.any(String) });
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
    const slow = exchange('POST /user/signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{');
    const quick = await exchange('GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(quick.status).toBe(200);
    expectRawProblem(await slow, 408);
  });
});

describe('a request without Host', () => {
  it('is a 400 problem naming the header, not an empty 400', async () => {
    const answer = await exchange('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectRawProblem(answer, 400);
    expect(JSON.parse(answer.body).errors).toEqual([{ field: 'Host', message: 'An HTTP/1.1 request must have a Host header' }]);
  });

  it('is served over HTTP/1.0, which has no Host', async () => {
    const answer = await exchange('GET /health HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
  });
});
