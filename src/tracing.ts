/**
 * Imported by the entry points before Nest, Fastify, pg or ioredis load: OpenTelemetry's
 * instrumentations patch those modules as they load. Starts tracing only when an OTLP
 * endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
 */
import { startTracing } from './common/tracing/tracing';

startTracing();
