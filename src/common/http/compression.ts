import fastifyCompress from '@fastify/compress';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { CONTENT_CODINGS, etagForCoding } from './etag';

/** Smaller bodies are sent as they are: compressing them saves too little to pay for itself. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

// What @fastify/compress compresses (its default): text, JSON and XML types.
const COMPRESSIBLE = /^text\/(?!event-stream)|[+/](?:json|text|xml)(?:;|$)/;

/**
 * Compresses response bodies of at least 1 KiB with br or gzip, when the request's
 * Accept-Encoding allows one (the client's preference first, br on a tie). Never:
 *
 * - responses sent with `Cache-Control: no-store`, which are those carrying a secret (a new
 *   or rolled API key, a token). A secret compressed beside text an attacker can influence
 *   leaks through the compressed length (BREACH), so they go out as they are;
 * - images, already compressed by their formats (their types are not compressible here).
 *
 * A compressed response is a representation of its own, so its strong ETag gets the coding
 * appended ("abc" becomes "abc-gzip"); conditional requests accept either (see etag.ts).
 * Every response that could be compressed says `Vary: accept-encoding`, compressed or not,
 * so that a cache does not hand a gzip body to a client that did not ask for one, or the
 * reverse. Request bodies are not decompressed: the API takes plain JSON only.
 */
export async function registerCompression(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyCompress, {
    encodings: [...CONTENT_CODINGS],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    globalDecompression: false,
  });
  // The plugin puts its onSend hook on each route as the route is added; these go around it.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
      route.onSend = [beforeCompression, ...own, afterCompression];
    });
}

const beforeCompression: onSendHookHandler = async (request: FastifyRequest, reply: FastifyReply, payload) => {
  if (/(?:^|,)\s*no-store\s*(?:,|$)/i.test(String(reply.getHeader('cache-control') ?? ''))) {
    // The plugin's own switch for leaving a response as it is.
    request.headers['x-no-compression'] = 'no-store';
    return payload;
  }
  const type = reply.getHeader('content-type');
  if (type === undefined || COMPRESSIBLE.test(String(type))) addVary(reply, 'accept-encoding');
  return payload;
};

const afterCompression: onSendHookHandler = async (_request, reply, payload) => {
  const coding = reply.getHeader('content-encoding');
  const etag = reply.getHeader('etag');
  if (typeof coding === 'string' && coding !== 'identity' && typeof etag === 'string') reply.header('ETag', etagForCoding(etag, coding));
  return payload;
};

function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined || current === '') {
    reply.header('Vary', field);
    return;
  }
  const fields = String(current)
    .split(',')
    .map((f) => f.trim().toLowerCase());
  if (!fields.includes('*') && !fields.includes(field.toLowerCase())) reply.header('Vary', `${String(current)}, ${field}`);
}
