import type { FastifyCompressOptions } from '@fastify/compress';
import { applyDecorators, Header } from '@nestjs/common';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onRouteHookHandler } from 'fastify';

import { type Coding, negotiatedCoding } from './accept-encoding';
import { CONTENT_CODINGS, etagForCoding } from './etag';
import { routeConfigEntry, withRouteConfig } from './route-config';

/** Smaller bodies are sent as they are: compressing them saves too little to pay for itself. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** Route flags (Fastify route config), read once as each route is added (the onRoute hooks below). */
const SECRET = 'carriesSecret';
const ENTITY_TAGGED = 'entityTagged';

/** Adds a flag to the route's Fastify config, beside any other decorator's. */
const routeFlag = (flag: string): MethodDecorator => withRouteConfig({ [flag]: true });

/**
 * For a response that carries a secret (a new or rolled API key, a token): `Cache-Control:
 * no-store`, and never compressed (keepSecretsUncompressed). A secret compressed beside text an
 * attacker can influence leaks through the compressed length (BREACH), so it goes out as it is.
 */
export const SecretResponse = () => applyDecorators(Header('Cache-Control', 'no-store'), routeFlag(SECRET));

/**
 * For a route that sends a strong ETag: a compressed response is a representation of its
 * own, so its tag gets the coding appended ("abc" becomes "abc-gzip", tagCodedRepresentations).
 * If-Match takes either; a read's If-None-Match only the tag of the coding it would get (see etag.ts).
 */
export const EntityTagged = () => routeFlag(ENTITY_TAGGED);

/**
 * The types compressed: text and JSON. Images, the other types the API sends, are compressed
 * by their formats already. (The plugin also takes any type mime-db calls compressible, such
 * as the /docs page's scripts, which are served by @fastify/static with its own HEAD.)
 */
const COMPRESSIBLE_TYPE = /^(?:text\/|application\/(?:[\w.-]+\+)?json\s*(?:;|$))/i;
const compressibleType = (type: string): boolean => COMPRESSIBLE_TYPE.test(type);

/**
 * @fastify/compress's options: bodies of at least 1 KiB of a compressible type with br or
 * gzip, when the request's Accept-Encoding allows one (the client's preference first, br on a
 * tie); it then says `Vary: accept-encoding`. Request bodies are not decompressed: the API
 * takes plain JSON only. responseCoding tells the same choice for an answer with no body.
 *
 * Each route's treatment is settled once, as the route is added (the plugin's onRoute hook
 * and the three below), so that no hook of this module runs on the way out of every response;
 * `Vary` is set with the standard headers.
 */
export const COMPRESSION_OPTIONS: FastifyCompressOptions = {
  encodings: [...CONTENT_CODINGS],
  threshold: COMPRESSION_THRESHOLD_BYTES,
  customTypes: compressibleType,
  globalDecompression: false,
};

/**
 * The content coding a 200 with a body of `type` and `size` bytes gets for this request, as
 * the plugin chooses it (COMPRESSION_OPTIONS, and the Accept-Encoding settleAcceptEncoding
 * leaves it): for the answers that say what a GET's body would be without sending one, HEAD
 * and 304 (RFC 9110, sections 9.3.2 and 15.4.5).
 */
export function responseCoding(request: FastifyRequest, type: string, size: number): Coding | 'identity' {
  const header = request.headers['accept-encoding'];
  if (header === undefined || size < COMPRESSION_THRESHOLD_BYTES || !compressibleType(type)) return 'identity';
  return negotiatedCoding(header);
}

/**
 * onRequest: the plugin's negotiator counts `*` as gzip even beside `gzip;q=0`, and it has no
 * option for another: a list with weights or a wildcard is settled here (accept-encoding.ts),
 * and the plugin, which reads the header as it sends, is handed the one coding chosen. A list
 * without either, the common case, it reads right, so it is left as it is.
 */
export const settleAcceptEncoding: onRequestHookHandler = (request, _reply, done) => {
  const header = request.raw.headers['accept-encoding'];
  if (header !== undefined && /[;*]/.test(header)) request.raw.headers['accept-encoding'] = negotiatedCoding(header);
  done();
};

/**
 * onRoute, before the plugin's own onRoute hook, which leaves a route with `compress: false`
 * alone: a route marked @SecretResponse() is never compressed.
 */
export const keepSecretsUncompressed: onRouteHookHandler = (route) => {
  if (routeConfigEntry(route.config, SECRET)) route.compress = false;
};

const onSendOf = (route: Parameters<onRouteHookHandler>[0]) =>
  route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];

/**
 * onRoute, after the plugin's own: Fastify answers HEAD by a route it copies from the GET's,
 * whose first onSend hook measures the body and drops it, so the plugin finds nothing to
 * compress and a HEAD would tell neither the coding nor the coded ETag a GET sends. This hook
 * says them (before tagCodedRepresentations'), by the GET's choice (responseCoding).
 */
export const codeHeadAsGet: onRouteHookHandler = (route) => {
  if (route.method === 'HEAD' && route.compress !== false) route.onSend = [...onSendOf(route), codingOfHead];
};

function codingOfHead(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
): void {
  const length = reply.getHeader('content-length');
  // Fastify measures a buffered body; a stream, unmeasured, the plugin compresses whatever its length.
  const size = length === undefined ? Infinity : Number(length);
  const type = reply.getHeader('content-type');
  const coding = responseCoding(request, typeof type === 'string' ? type : 'application/json', size);
  if (coding !== 'identity' && !reply.hasHeader('content-encoding')) {
    // No Content-Length: only compressing tells it, work a HEAD would throw away (RFC 9110, 9.3.2 allows leaving it out).
    reply.header('Content-Encoding', coding).removeHeader('Content-Length');
  }
  done(null, payload);
}

/**
 * onRoute, after the plugin's own, which puts its onSend hook on the route: a route marked
 * @EntityTagged() gets the coding appended to its ETag after the plugin has compressed.
 */
export const tagCodedRepresentations: onRouteHookHandler = (route) => {
  if (routeConfigEntry(route.config, ENTITY_TAGGED)) route.onSend = [...onSendOf(route), tagCodedRepresentation];
};

function tagCodedRepresentation(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
): void {
  const coding = reply.getHeader('content-encoding');
  const etag = reply.getHeader('etag');
  if (typeof coding === 'string' && typeof etag === 'string') reply.header('ETag', etagForCoding(etag, coding));
  done(null, payload);
}
