import { randomUUID } from 'node:crypto';
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

import type { FastifyRequest } from 'fastify';

import { DomainError, PROBLEM_CONTENT_TYPE, ValidationFailedError } from '../problem/problem';
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
import { pathOf } from './location';
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

/** What Node's parser gives with the errors it raises: the bytes it read, and where it stopped. */
type ParserError = Error & { code?: string; reason?: string; rawPacket?: unknown; bytesParsed?: number };

const rawPacketOf = (error: ParserError): Buffer | undefined =>
  Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
const ORIGIN_FORM = /^\/[\x21-\x7e]{0,2047}$/;

/**
 * The header whose value has a byte HTTP does not allow there (a control character), named
 * by the line the parser stopped on, so that the answer says which header to fix.
 */
function headerWithBadValue(error: ParserError): ValidationFailedError | undefined {
  if (error.code !== 'HPE_INVALID_HEADER_TOKEN' || !/value/i.test(error.reason ?? '')) return undefined;
  const { bytesParsed } = error;
  const rawPacket = rawPacketOf(error);
  if (!rawPacket || bytesParsed === undefined || bytesParsed > rawPacket.length) return undefined;
  const lineStart = rawPacket.lastIndexOf('\n', bytesParsed) + 1;
  const line = rawPacket.subarray(lineStart, bytesParsed).toString('latin1');
  const name = line.slice(0, line.indexOf(':'));
  if (!TOKEN.test(name)) return undefined;
  return new ValidationFailedError(
    [{ field: name, message: `${name} must not contain control characters` }],
    `The ${name} header has a character HTTP does not allow in a header value.`,
  );
}

/**
 * The path of the request the parser refused, from its request line, as every other problem
 * names its path in `instance`; else (a request line it could not read) the URN of the
 * answer's X-Request-ID, which names this occurrence in the logs. While an earlier request
 * is being answered, the bytes read may begin with that request's line, not this one's.
 */
function instanceOf(error: ParserError, requestId: string, afterEarlier: boolean): string {
  if (afterEarlier) return `urn:uuid:${requestId}`;
  const head = rawPacketOf(error)?.subarray(0, 2100).toString('latin1') ?? '';
  const target = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r?\n/.exec(head)?.[1];
  return target !== undefined && ORIGIN_FORM.test(target) ? pathOf(target) : `urn:uuid:${requestId}`;
}

/** The response being written to the socket, as Node keeps it; later ones wait in a queue. */
const responseOn = (socket: Socket): ServerResponse | undefined =>
  (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;

/**
 * Whether the socket is answering a request that arrived whole, before the bytes the parser
 * refused. (Only the refused request itself can have arrived in part.)
 */
const answeringEarlier = (socket: Socket): boolean => responseOn(socket)?.req.complete === true;

/**
 * How long a refusal waits for the answers before it on its connection: far longer than an
 * answer takes (a query is cut at DATABASE_STATEMENT_TIMEOUT_MS), so that only a handler
 * that never ends is cut, which must not hold the connection open forever.
 */
const EARLIER_ANSWERS_LIMIT_MS = 30_000;

/**
 * Calls `write` once no other response is being written to the socket, telling it whether
 * the refused request was answered meanwhile. Node gives queued responses the socket one by
 * one, each as the one before finishes, so the socket is looked at again after each. The
 * refused request's own response is waited for only once begun: its handler may be waiting
 * for a body that will not come. Nothing may be written into the middle of another
 * response: past the limit the connection is closed unanswered, and a socket closed
 * meanwhile is left be.
 */
function afterOtherResponses(socket: Socket, write: (refusedAnswered: boolean) => void): void {
  const limit = setTimeout(() => socket.destroy(), EARLIER_ANSWERS_LIMIT_MS).unref();
  let refusedAnswered = false;
  const next = (): void => {
    const response = socket.destroyed ? undefined : responseOn(socket);
    if (response && (response.req.complete || response.headersSent)) {
      refusedAnswered ||= !response.req.complete;
      response.once('close', next);
      return;
    }
    clearTimeout(limit);
    if (!socket.destroyed) write(refusedAnswered);
  };
  next();
}

/** Sockets whose refusal is written or waiting: more bytes on one meet the parser's error again. */
const refusedSockets = new WeakSet<Socket>();

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (a malformed request line,
 * a bad Content-Length, headers over the size limit) get a problem document too, written
 * straight to the socket, with the usual headers. Requests that arrived whole before them
 * on the connection are answered first (Node's own handler drops those answers). The
 * connection is then closed, as the parser's state is unknown.
 */
export function clientErrorHandler({
  baseUrl,
  extraHeaders = {},
}: { baseUrl?: string; extraHeaders?: Record<string, string> } = {}) {
  return (error: ParserError, socket: Socket): void => answerClientError(error, socket, baseUrl, extraHeaders);
}

function answerClientError(
  error: ParserError,
  socket: Socket,
  baseUrl: string | undefined,
  extraHeaders: Record<string, string>,
): void {
  if (refusedSockets.has(socket)) return;
  // A reset or timed-out socket cannot be answered.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  refusedSockets.add(socket);
  const problem = problemOfError(
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HeadersTooLargeError()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new RequestIncompleteError()
        : (headerWithBadValue(error) ?? new UnparsableRequestError()),
    baseUrl,
  );
  const requestId = randomUUID();
  problem.instance = instanceOf(error, requestId, answeringEarlier(socket));
  const { status } = problem;
  const body = JSON.stringify(problem);
  const headers = {
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-ID': requestId,
    ...SECURITY_HEADERS,
    ...extraHeaders,
    Connection: 'close',
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  afterOtherResponses(socket, (refusedAnswered) => {
    // An answer that closed its connection leaves no room for this one; a request answered
    // before its bytes were refused (a 400 for its Host) is not answered twice.
    if (!socket.writable) return;
    if (refusedAnswered) socket.end();
    else socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
