import fastifyCompress from '@fastify/compress';
import { applyDecorators, Header } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { negotiatedCoding } from './accept-encoding';
import { CONTENT_CODINGS, etagForCoding } from './etag';
import { withRouteConfig } from './route-config';

/** Smaller bodies are sent as they are: compressing them saves too little to pay for itself. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** Route flags (Fastify route config), read once as each route is added. */
const SECRET = 'carriesSecret';
const ENTITY_TAGGED = 'entityTagged';

/** Adds a flag to the route's Fastify config, beside any other decorator's. */
const routeFlag = (flag: string): MethodDecorator => withRouteConfig({ [flag]: true });

/**
 * For a response that carries a secret (a new or rolled API key, a token): `Cache-Control:
 * no-store`, and never compressed. A secret compressed beside text an attacker can influence
 * leaks through the compressed length (BREACH), so it goes out as it is.
 */
export const SecretResponse = () => applyDecorators(Header('Cache-Control', 'no-store'), routeFlag(SECRET));

/**
 * For a route that sends a strong ETag: a compressed response is a representation of its
 * own, so its tag gets the coding appended ("abc" becomes "abc-gzip"); conditional requests
 * accept either (see etag.ts).
 */
export const EntityTagged = () => routeFlag(ENTITY_TAGGED);

/**
 * Compresses response bodies of at least 1 KiB with br or gzip, when the request's
 * Accept-Encoding allows one (the client's preference first, br on a tie), and then says
 * `Vary: accept-encoding`. Never routes marked SecretResponse, nor images (already
 * compressed by their formats; their types are not compressible here). Request bodies are
 * not decompressed: the API takes plain JSON only.
 *
 * Each route's treatment is settled once, as the route is added, so that no hook of this
 * module runs on the way out of every response; `Vary` is set with the standard headers.
 */
export async function registerCompression(app: NestFastifyApplication): Promise<void> {
  // The plugin's negotiator counts `*` as gzip even beside `gzip;q=0`, and it has no option
  // for another: a list with weights or a wildcard is settled here (accept-encoding.ts),
  // and the plugin, which reads the header as it sends, is handed the one coding chosen.
  // A list without either, the common case, it reads right, so it is left as it is.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, _reply, done) => {
      const header = request.raw.headers['accept-encoding'];
      if (header !== undefined && /[;*]/.test(header))
        request.raw.headers['accept-encoding'] = negotiatedCoding(header);
      done();
    });
  // Before the plugin's own onRoute hook, which leaves a route with `compress: false` alone.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const config = route.config as Record<string, unknown> | undefined;
      if (config?.[SECRET]) route.compress = false;
    });
  await app.register(fastifyCompress, {
    encodings: [...CONTENT_CODINGS],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    globalDecompression: false,
  });
  // After the plugin's hook, which puts its onSend hook on the route.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const config = route.config as Record<string, unknown> | undefined;
      if (!config?.[ENTITY_TAGGED]) return;
      const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
      route.onSend = [...own, tagCodedRepresentation];
    });
}

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
