import fastifyCompress from '@fastify/compress';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, preHandlerHookHandler } from 'fastify';

import type { AppConfig } from '../../config/app-config';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { requestMetricsOf } from '../metrics/metrics.module';
import { ProblemFilter } from '../problem/problem.filter';
import { requestIdTracing } from '../tracing/tracing';
import {
  codeHeadAsGet,
  COMPRESSION_OPTIONS,
  keepSecretsUncompressed,
  settleAcceptEncoding,
  tagCodedRepresentations,
} from './compression';
import { registerCors } from './cors';
import { cleanForwardedFor, closeConnectionsWhen, sendEnvironmentHeaders, standardHeadersAndHost } from './http-hooks';
import { refuseEncodedBodies, registerJsonBodyParser } from './json-body';
import { refuseAllButForms, refuseUnexpectedForms } from './multipart';
import { RouteMethods } from './route-methods';

export interface EdgeOptions {
  config: AppConfig;
  /** The largest JSON body, in bytes. */
  jsonBodyLimit: number;
  /** A sandbox's X-API-Environment (environmentHeadersOf); undefined when live. */
  environmentHeaders?: Record<string, string>;
  /** Features' preHandlers, run in this order after the unknown-route answer (createApp lists them). */
  featurePreHandlers?: preHandlerHookHandler[];
}

/**
 * The HTTP edge: every Fastify hook of the service is added here, in the order a request meets
 * them (Fastify runs the hooks of one kind in the order they were added, a route's own after
 * the server's). The route flags some of them read are set by the decorators named beside
 * them, on the handler. docs/development.md ("A request through the edge") walks a request
 * through this list.
 *
 * Called by createApp before app.init(): hooks added before Fastify is ready apply to every
 * route, and the onRoute hooks at the end see every route, all declared later.
 */
export async function registerEdge(
  app: NestFastifyApplication,
  { config, jsonBodyLimit, environmentHeaders, featurePreHandlers = [] }: EdgeOptions,
): Promise<void> {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  const shutdown = app.get(ShutdownState);
  const metrics = requestMetricsOf(app);
  const traceRequestId = requestIdTracing();

  // Before any hook: an Expect other than 100-continue, which Node would answer itself with a
  // bare 417, is ignored (RFC 9110 allows either), so the request gets this service's answer.
  fastify.server.on('checkExpectation', (request, response) => fastify.server.emit('request', request, response));

  // onRequest. (OpenTelemetry's own hook, when tracing is on, comes before all: it is added as
  // Fastify starts.)
  if (config.TRUST_PROXY !== false) fastify.addHook('onRequest', cleanForwardedFor);
  if (environmentHeaders) fastify.addHook('onRequest', sendEnvironmentHeaders(environmentHeaders));
  fastify.addHook('onRequest', standardHeadersAndHost);
  // Its hook answers a preflight and ends the request there.
  if (config.CORS_ORIGINS.length > 0) await registerCors(app, config.CORS_ORIGINS, app.get(RouteMethods));
  fastify.addHook('onRequest', settleAcceptEncoding);
  if (traceRequestId) fastify.addHook('onRequest', traceRequestId);

  // preParsing: no body is taken compressed (415); @AcceptsMultipart() routes take forms only.
  fastify.addHook('preParsing', refuseEncodedBodies);
  fastify.addHook('preParsing', refuseAllButForms);
  // The body: JSON, UTF-8 only (@AcceptsMergePatch() routes also take a merge patch); forms by
  // @fastify/multipart, registered at the end.
  registerJsonBodyParser(app, jsonBodyLimit);
  // preValidation: a form anywhere else is refused.
  fastify.addHook('preValidation', refuseUnexpectedForms);

  // preHandler: unknown routes answered (404, or 405 with Allow), then the features' own
  // (region-keys: an unusable key refused on @RegionKeyAuth(permission) routes).
  fastify.addHook('preHandler', app.get(ProblemFilter).answerUnknownRoute);
  for (const preHandler of featurePreHandlers) fastify.addHook('preHandler', preHandler);

  // Then Nest: guards (the auth decorators), interceptors, pipes, the handler.

  // onSend: Connection: close from SIGTERM on; then each route's own (compression, and the
  // coded ETag of @EntityTagged() routes, added below as the routes are declared).
  fastify.addHook(
    'onSend',
    closeConnectionsWhen(() => shutdown.isShuttingDown),
  );

  // onResponse: requests no route matched are counted; each route counts its own (below).
  if (metrics) fastify.addHook('onResponse', metrics.onResponse);

  // onRoute, as each route is declared (CORS's catch-all OPTIONS route, declared above, is not
  // seen by them): the route copied for the 405's Allow; @SecretResponse() routes never
  // compressed; the plugin's onSend put on the others; a HEAD told the coding its GET gets;
  // @EntityTagged() routes' coded ETag after them; the route's own request metrics.
  fastify.addHook('onRoute', app.get(RouteMethods).copyRoutesOf(fastify));
  fastify.addHook('onRoute', keepSecretsUncompressed);
  await app.register(fastifyCompress, COMPRESSION_OPTIONS);
  fastify.addHook('onRoute', codeHeadAsGet);
  fastify.addHook('onRoute', tagCodedRepresentations);
  if (metrics) fastify.addHook('onRoute', metrics.onRoute);

  // Last: the plugin loads as Nest initialises, and its own hooks run after all of the above.
  app.get<HttpAdapterHost<FastifyAdapter>>(HttpAdapterHost).httpAdapter.useMultipart();
}
