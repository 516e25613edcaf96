import type { FastifyCompressOptions } from '@fastify/compress';
import { applyDecorators, Header } from '@nestjs/common';
import type { FastifyReply, FastifyRequest, onRequestHookHandler, onRouteHookHandler } from 'fastify';

import { negotiatedCoding } from './accept-encoding';
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
 * own, so its tag gets the coding appended ("abc" becomes "abc-gzip", tagCodedRepresentations);
 * conditional requests accept either (see etag.ts).
 */
export const EntityTagged = () => routeFlag(ENTITY_TAGGED);

/**
 * @fastify/compress's options: bodies of at least 1 KiB with br or gzip, when the request's
 * Accept-Encoding allows one (the client's preference first, br on a tie); it then says
 * `Vary: accept-encoding`. Images are left alone (already compressed by their formats; their
 * types are not compressible here). Request bodies are not decompressed: the API takes plain
 * JSON only.
 *
 * Each route's treatment is settled once, as the route is added (the plugin's onRoute hook
 * and the two below), so that no hook of this module runs on the way out of every response;
 * `Vary` is set with the standard headers.
 */
export const COMPRESSION_OPTIONS: FastifyCompressOptions = {
  encodings: [...CONTENT_CODINGS],
  threshold: COMPRESSION_THRESHOLD_BYTES,
  globalDecompression: false,
};

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

/**
 * onRoute, after the plugin's own, which puts its onSend hook on the route: a route marked
 * @EntityTagged() gets the coding appended to its ETag after the plugin has compressed.
 */
export const tagCodedRepresentations: onRouteHookHandler = (route) => {
  if (!routeConfigEntry(route.config, ENTITY_TAGGED)) return;
  const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
  route.onSend = [...own, tagCodedRepresentation];
};

function tagCodedRepresentation(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
): void {
  const coding = reply.getHeader('content-encoding');
  if (typeof coding === 'string' && coding !== 'identity') {
    const etag = reply.getHeader('etag');
    if (typeof etag === 'string') reply.header('ETag', etagForCoding(etag, coding));
  }
  done(null, payload);
}
