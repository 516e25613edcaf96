import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import type { FastifyInstance, FastifyRequest } from 'fastify';

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

/** Headers every response carries, errors, 404s and CORS preflights included. */
export function registerHttpHooks(
  fastify: FastifyInstance,
  {
    readForwardedFor = false,
    environmentHeaders,
    shuttingDown = () => false,
  }: {
    readForwardedFor?: boolean;
    environmentHeaders?: Record<string, string>;
    /** True from SIGTERM on (ShutdownState), through the drain delay and the close. */
    shuttingDown?: () => boolean;
  } = {},
): void {
  // Hooks on every request are callback-style: an async hook costs a promise and a turn of
  // the microtask queue per request.
  // First of all hooks: nothing may read request.ip before the header is cleaned.
  if (readForwardedFor)
    fastify.addHook('onRequest', (request, _reply, done) => {
      dropUnreadableForwardedFor(request.raw);
      done();
    });
  // Before CORS (registered after these hooks), whose preflight answers end the request.
  if (environmentHeaders)
    fastify.addHook('onRequest', (_request, reply, done) => {
      reply.headers(environmentHeaders);
      done();
    });
  fastify.addHook('onRequest', (request, reply, done) => {
    applyStandardHeaders(request, reply);
    done(hostHeaderError(request));
  });

  // From SIGTERM on, every response closes its connection, and says so first: a balancer
  // then never reuses it, so the only connections left when the listener closes are idle
  // ones it has stopped sending on (it saw readiness fail during the drain delay). Closing
  // a kept-alive connection silently instead races a request the balancer may be sending
  // on it, which fails without ever reaching the service.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (shuttingDown() && request.raw.httpVersionMajor < 2) reply.header('Connection', 'close');
    done(null, payload);
  });
}

/**
 * HTTP/1.1 requires Host (RFC 9112, section 3.2; Node's check is off, see httpServerLimits),
 * and a valid one (same section): no URI the service sends is ever built from another
 * (see location.ts), and only one (same section). Undefined when the Host header is
 * acceptable.
 */
function hostHeaderError(request: FastifyRequest): ValidationFailedError | undefined {
  // Node keeps the first of several Host lines and drops the rest; RFC 9112 answers 400.
  if (hostLines(request.raw.rawHeaders) > 1) {
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
  if (host !== undefined && !isPlainHost(host)) {
    return new ValidationFailedError(
      [{ field: 'Host', message: 'Host must be a host name or IP address (IPv6 in brackets), with an optional port' }],
      'The Host header is malformed.',
    );
  }
  return undefined;
}

function hostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === 4 && rawHeaders[i].toLowerCase() === 'host') count++;
  return count;
}
