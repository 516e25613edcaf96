import { IncomingMessage } from 'node:http';

import { FastifyOtelInstrumentation } from '@fastify/otel';
import { type Span, trace } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { onRequestHookHandler } from 'fastify';

import { scrubKeys } from '../logging/scrub';
import { isHealthProbe, pathOf, redisStatement } from './span-content';

/** The attribute that carries the request id (the X-Request-ID of the response). */
export const REQUEST_ID_ATTRIBUTE = 'http.request.id';
export const DEFAULT_SERVICE_NAME = 'region-keys-api';

// Where the http instrumentation leaves a request's server span for the Fastify hook below.
const SERVER_SPAN = Symbol('otel.serverSpan');
type WithServerSpan = IncomingMessage & { [SERVER_SPAN]?: Span };

export interface OpenTelemetry {
  /** onRequest: puts the request id on the request's spans. */
  traceRequestId: onRequestHookHandler;
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (endpoint,
 * protocol, headers, sampler, batching), exporting traces only: metrics are Prometheus's
 * (METRICS_PORT) and logs go to stdout. Spans: the HTTP server span of each request, the
 * Fastify request and handler spans under it, and the pg and ioredis calls made for it;
 * health probes make none.
 */
export function startOpenTelemetry(env: NodeJS.ProcessEnv): OpenTelemetry {
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // An ignored request runs with tracing suppressed: no span of Fastify, pg or ioredis either.
        ignoreIncomingRequestHook: (request) => isHealthProbe(request.url),
        requestHook: (span, request) => {
          if (!(request instanceof IncomingMessage)) return;
          (request as WithServerSpan)[SERVER_SPAN] = span;
          // A key a client put in the path or query reaches no span: the same scrub as the logs.
          const url = request.url ?? '/';
          span.setAttribute('url.path', scrubKeys(pathOf(url)));
          if (url.includes('?')) span.setAttribute('url.query', scrubKeys(url.slice(url.indexOf('?') + 1)));
        },
      }),
      // Request and handler spans; a span per lifecycle hook would outnumber the useful ones.
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        // It sets url.path to the whole URL; the query string is the server span's url.query.
        requestHook: (span, request) => span.setAttribute('url.path', scrubKeys(pathOf(request.url))),
      }),
      // Queries outside a request (migrations, start-up) would each make a trace of their own.
      // Statements are recorded with their placeholders, never their parameter values.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: redisStatement }),
    ],
  });
  sdk.start();
  return {
    // The request id is known only once Fastify has the request: on the Fastify request
    // span (the active one here) and on the HTTP server span, which backends show first.
    traceRequestId: (request, _reply, done) => {
      trace.getActiveSpan()?.setAttribute(REQUEST_ID_ATTRIBUTE, request.id);
      (request.raw as WithServerSpan)[SERVER_SPAN]?.setAttribute(REQUEST_ID_ATTRIBUTE, request.id);
      done();
    },
    shutdown: () => sdk.shutdown(),
  };
}
