import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';

import { clientErrorHandler } from '../../src/common/http/client-error';

// Requests Node's HTTP parser refuses, on a plain Node server with the service's handler.
let server: Server;
let port: number;

beforeAll(async () => {
  // /echo answers once it has read the body; any other path at once.
  server = createServer((request, response) => {
    if (request.url === '/echo') request.on('end', () => response.end('ok')).resume();
    else response.end('ok');
  });
  server.on('clientError', clientErrorHandler());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Writes `raw` and collects what the server writes before it closes the connection. */
function rawExchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

/** Writes `raw` and parses the answer the handler writes before it closes the connection. */
function exchange(raw: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  return rawExchange(raw).then((text) => {
    const [head, body] = text.split('\r\n\r\n');
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
  });
}

describe('a request the HTTP parser refuses', () => {
  it('gets a 431 whose instance is the path it was sent to, as every other problem has', async () => {
    const answer = await exchange(`GET /planets?limit=5 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.body).toMatchObject({ type: '/problems/headers-too-large', instance: '/planets' });
  });

  it('gets a 400 whose instance is the URN of its request id when its request line cannot be read', async () => {
    const answer = await exchange('GE T / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ type: '/problems/bad-request' });
    expect(answer.body.instance).toBe(`urn:uuid:${answer.headers['x-request-id']}`);
  });

  it('gets a 400 that names Idempotency-Key when that header holds a control character', async () => {
    const answer = await exchange('POST /planets HTTP/1.1\r\nHost: x\r\nIdempotency-Key: ab\u0001cd\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      type: '/problems/validation',
      title: 'Invalid request',
      status: 400,
      detail: 'The Idempotency-Key header has a character HTTP does not allow in a header value.',
      instance: '/planets',
      errors: [{ field: 'Idempotency-Key', message: 'Idempotency-Key must not contain control characters' }],
    });
  });

  it('names any header so refused, and no header for another fault of the header block', async () => {
    const named = await exchange('GET /me HTTP/1.1\r\nHost: x\r\nX-API-Key: rk_\u0007\r\n\r\n');
    expect(named.body.errors).toEqual([
      { field: 'X-API-Key', message: 'X-API-Key must not contain control characters' },
    ]);
    const badName = await exchange('GET /me HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n');
    expect(badName.body).toMatchObject({ type: '/problems/bad-request', instance: '/me' });
    expect(badName.body.errors).toBeUndefined();
  });
});

describe('a request whose body the HTTP parser refuses', () => {
  const badChunk = 'Transfer-Encoding: chunked\r\n\r\nzz\r\n';

  it('gets its 400 at once when its handler waits for the body', async () => {
    const answer = await exchange(`POST /echo HTTP/1.1\r\nHost: x\r\n${badChunk}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ type: '/problems/bad-request', instance: '/echo' });
  });

  it('gets no second answer when it was answered before its body was read', async () => {
    const text = await rawExchange(`POST / HTTP/1.1\r\nHost: x\r\n${badChunk}`);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text.match(/HTTP\/1\.1/g)).toHaveLength(1);
  });
});
