import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

import type { RouteMethods } from './route-methods';

/** Response headers a browser page may read besides the CORS-safelisted ones. */
export const EXPOSED_HEADERS = [
  'X-Request-ID',
  'Location',
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'X-Pagination-Total',
  'X-Pagination-Page',
  'X-Pagination-Per-Page',
  'X-API-Environment',
  'Idempotent-Replayed',
];

/** Request headers a page may send: the credentials of both areas, the conditional ones, and a create's retry key. */
const ALLOWED_HEADERS = [
  'Content-Type',
  'Authorization',
  'X-API-Key',
  'X-Request-ID',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
];

/**
 * CORS for the exact origins in CORS_ORIGINS, preflight included. A preflight allows every
 * method some route has (`routes`, complete once requests arrive), so a method a new route
 * brings is never left out. Credentials are headers the page sets itself (X-API-Key,
 * Authorization), never cookies, so the browser is not asked to send any
 * (no Access-Control-Allow-Credentials). A page of another origin gets no CORS headers, and
 * its browser keeps the response from it.
 */
export async function registerCors(
  app: NestFastifyApplication,
  origins: string[],
  routes: RouteMethods,
): Promise<void> {
  const options: FastifyCorsOptions = {
    origin: origins,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  };
  // The plugin answers an OPTIONS request that is not a preflight with a 400 in plain text.
  // Such a request is passed on instead, as it is without CORS: the plugin's catch-all
  // OPTIONS route hands it to the not-found handler, which answers a 405 problem with Allow
  // on a known path and a 404 problem elsewhere.
  const notPreflight: FastifyCorsOptions = { ...options, preflight: false };
  await app.register(fastifyCors, {
    delegator: (request, callback) =>
      callback(null, isPreflight(request) ? { ...options, methods: routes.declared() } : notPreflight),
  });
}

/** A CORS preflight as browsers send it (Fetch standard): OPTIONS with Origin and Access-Control-Request-Method. */
const isPreflight = (request: FastifyRequest): boolean =>
  request.raw.method === 'OPTIONS' &&
  Boolean(request.headers.origin) &&
  Boolean(request.headers['access-control-request-method']);
