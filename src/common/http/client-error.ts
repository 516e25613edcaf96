import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEM_CONTENT_TYPE, problemType } from '../problem/problem';
import { SECURITY_HEADERS } from './http-hooks';

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (a malformed request line,
 * a bad Content-Length, headers over the size limit) get a problem document too, written
 * straight to the socket, with the usual headers. The connection is then closed, as the
 * parser's state is unknown.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  answerClientError(error, socket, {});
}

/** clientErrorHandler that adds `extraHeaders` (a sandbox's X-API-Environment) to its answers. */
export function clientErrorHandlerWith(extraHeaders: Record<string, string>): typeof clientErrorHandler {
  return (error, socket) => answerClientError(error, socket, extraHeaders);
}

function answerClientError(error: Error & { code?: string }, socket: Socket, extraHeaders: Record<string, string>): void {
  // A reset or timed-out socket cannot be answered.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({
    type: problemType(status === 400 ? 'bad-request' : `http-${status}`),
    title: STATUS_CODES[status],
    status,
    detail: status === 431 ? 'The request headers are too large.' : 'The request could not be parsed as HTTP.',
  });
  const headers = {
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-ID': randomUUID(),
    ...SECURITY_HEADERS,
    ...extraHeaders,
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head.join('\r\n')}\r\n\r\n${body}`);
}
