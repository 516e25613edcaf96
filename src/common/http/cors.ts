import fastifyCors from '@fastify/cors';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

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
];

/** Request headers a page may send: the credentials of both areas, and the conditional ones. */
const ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'X-API-Key', 'X-Request-ID', 'If-Match', 'If-None-Match'];

/**
 * CORS for the exact origins in CORS_ORIGINS, preflight included. Credentials are headers
 * the page sets itself (X-API-Key, Authorization), never cookies, so the browser is not
 * asked to send any (no Access-Control-Allow-Credentials). A page of another origin gets no
 * CORS headers, and its browser keeps the response from it.
 */
export async function registerCors(app: NestFastifyApplication, origins: string[]): Promise<void> {
  await app.register(fastifyCors, {
    origin: origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
  });
}
