import type { FastifyReply, FastifyRequest } from 'fastify';

/*
 * The headers every response carries. Kept apart from the hooks (which throw problems) so
 * that the problem filter, below the hooks, can set them too without importing them.
 */

export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Sets the headers every response carries. */
export function applyStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-ID', request.id);
  reply.headers(SECURITY_HEADERS);
  // Any response may be sent compressed or not by the client's Accept-Encoding (see
  // compression.ts); said here once, rather than by a hook on every response's way out.
  reply.header('Vary', 'accept-encoding');
}
