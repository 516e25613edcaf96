import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import type { FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';

import { looksLikeKey } from '../logging/scrub';
import { ValidationFailedError } from '../problem/problem';
import { isPlainHost } from './location';
import { applyStandardHeaders } from './standard-headers';
import { dropUnreadableForwardedFor } from './trust-proxy';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The client's X-Request-ID when it is short and plain, else a new UUID. A key-shaped id is
 * replaced too: it would be written into every log line of the request.
 */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) && !looksLikeKey(sent) ? sent : randomUUID();
}

/**
 * What a sandbox adds to every response, so that an integrator (or a log, or a proxy) sees
 * which environment answered. Undefined when live: live responses carry nothing extra and
 * pay for no hook.
 */
export function environmentHeadersOf(environment: 'live' | 'sandbox'): Record<string, string> | undefined {
  return environment === 'sandbox' ? { 'X-API-Environment': 'sandbox' } : undefined;
}

// The hooks below run on every request, so they are callback-style: an async hook costs a
// promise and a turn of the microtask queue per request. edge.ts registers them, in order.

/**
 * onRequest, first of all hooks when TRUST_PROXY is set: nothing may read request.ip before
 * X-Forwarded-For is cleaned (trust-proxy.ts).
 */
export const cleanForwardedFor: onRequestHookHandler = (request, _reply, done) => {
  dropUnreadableForwardedFor(request.raw);
  done();
};

/**
 * onRequest: a sandbox's X-API-Environment, set before CORS, whose preflight answers end the
 * request.
 */
export const sendEnvironmentHeaders =
  (headers: Record<string, string>): onRequestHookHandler =>
  (_request, reply, done) => {
    reply.headers(headers);
    done();
  };

/**
 * onRequest: the headers every response carries, errors, 404s and CORS preflights included;
 * then a 400 for a missing, repeated or malformed Host.
 */
export const standardHeadersAndHost: onRequestHookHandler = (request, reply, done) => {
  applyStandardHeaders(request, reply);
  done(hostHeaderError(request) ?? repeatedAuthorizationError(request));
};

/**
 * onSend: from SIGTERM on (`shuttingDown`, ShutdownState), every response closes its
 * connection, and says so first: a balancer then never reuses it, so the only connections
 * left when the listener closes are idle ones it has stopped sending on (it saw readiness fail
 * during the drain delay). Closing a kept-alive connection silently instead races a request
 * the balancer may be sending on it, which fails without ever reaching the service.
 */
export const closeConnectionsWhen =
  (shuttingDown: () => boolean): onSendHookHandler =>
  (request, reply, payload, done) => {
    if (shuttingDown() && request.raw.httpVersionMajor < 2) reply.header('Connection', 'close');
    done(null, payload);
  };

/**
 * HTTP/1.1 requires Host (RFC 9112, section 3.2; Node's check is off, see httpServerLimits),
 * and a valid one (same section): no URI the service sends is ever built from another
 * (see location.ts), and only one (same section). Undefined when the Host header is
 * acceptable.
 */
function hostHeaderError(request: FastifyRequest): ValidationFailedError | undefined {
  // Node keeps the first of several Host lines and drops the rest; RFC 9112 answers 400.
  if (linesOf(request.raw.rawHeaders, 'host') > 1) {
    return new ValidationFailedError(
      [{ field: 'Host', message: 'A request must have exactly one Host header' }],
      'The request has more than one Host header.',
    );
  }
  const host = request.headers.host;
  if (request.raw.httpVersion === '1.1' && host === undefined) {
    return new ValidationFailedError(
      [{ field: 'Host', message: 'An HTTP/1.1 request must have a Host header' }],
      'The Host header is missing.',
    );
  }
  return host !== undefined && !isPlainHost(host) ? malformedHostError() : undefined;
}

/** The answer to a Host that is no host name or address; also the example of the edge's 400 (openapi.ts). */
export const malformedHostError = (): ValidationFailedError =>
  new ValidationFailedError(
    [{ field: 'Host', message: 'Host must be a host name or IP address (IPv6 in brackets), with an optional port' }],
    'The Host header is malformed.',
  );

/**
 * Authorization holds one credential (RFC 9110, section 11.6.2). Node keeps the first of several
 * lines and drops the rest, so which one authenticates would depend on their order: refused.
 */
function repeatedAuthorizationError(request: FastifyRequest): ValidationFailedError | undefined {
  if (request.headers.authorization === undefined || linesOf(request.raw.rawHeaders, 'authorization') < 2)
    return undefined;
  return new ValidationFailedError(
    [{ field: 'Authorization', message: 'A request may carry one Authorization header' }],
    'The request has more than one Authorization header.',
  );
}

/** How many lines of the header `name` (lower case) the request has. */
function linesOf(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === name.length && rawHeaders[i].toLowerCase() === name) count++;
  return count;
}
