import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

import type { FastifyRequest } from 'fastify';

import { DomainError, PROBLEM_CONTENT_TYPE } from '../problem/problem';
import { problemOfError } from '../problem/problem-reply';
import { BAD_REQUEST, declareProblemExample, HEADERS_TOO_LARGE, REQUEST_TIMEOUT } from '../problem/problem-types';

export class HeadersTooLargeError extends DomainError {
  constructor() {
    super(HEADERS_TOO_LARGE, 'The request headers are too large.');
  }
}
declareProblemExample(HEADERS_TOO_LARGE, () => new HeadersTooLargeError());

/** The request's headers and body did not arrive whole within REQUEST_TIMEOUT_MS. */
export class RequestIncompleteError extends DomainError {
  constructor() {
    super(REQUEST_TIMEOUT, 'The request did not arrive whole in time.');
  }
}

export class UnparsableRequestError extends DomainError {
  constructor() {
    super(BAD_REQUEST, 'The request could not be parsed as HTTP.');
  }
}
import { SECURITY_HEADERS } from './standard-headers';

/** The client closed its connection before its request had arrived whole (the body cut off). */
export const closedMidRequest = (request: FastifyRequest): boolean =>
  request.raw.destroyed && !request.raw.readableEnded;

/**
 * `error` is what reading the body met when the client closed its connection mid-body (Node's
 * "aborted", ECONNRESET): a client's doing, not a fault of the server or of its database,
 * and nobody is left to read an answer.
 */
export const isClientAbort = (error: unknown, request: FastifyRequest): boolean =>
  closedMidRequest(request) && (error as { code?: unknown } | null)?.code === 'ECONNRESET';

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (a malformed request line,
 * a bad Content-Length, headers over the size limit) get a problem document too, written
 * straight to the socket, with the usual headers. The connection is then closed, as the
 * parser's state is unknown.
 */
export function clientErrorHandler({
  baseUrl,
  extraHeaders = {},
}: { baseUrl?: string; extraHeaders?: Record<string, string> } = {}) {
  return (error: Error & { code?: string }, socket: Socket): void =>
    answerClientError(error, socket, baseUrl, extraHeaders);
}

function answerClientError(
  error: Error & { code?: string },
  socket: Socket,
  baseUrl: string | undefined,
  extraHeaders: Record<string, string>,
): void {
  // A reset or timed-out socket cannot be answered.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const problem = problemOfError(
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HeadersTooLargeError()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new RequestIncompleteError()
        : new UnparsableRequestError(),
    baseUrl,
  );
  const { status } = problem;
  const body = JSON.stringify(problem);
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
