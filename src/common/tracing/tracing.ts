import type { onRequestHookHandler } from 'fastify';

import type { OpenTelemetry } from './open-telemetry';

let active: OpenTelemetry | undefined;

/** Tracing is on when an OTLP endpoint is set (for all signals, or for traces). */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts OpenTelemetry when configured. Instrumentations patch http, pg and ioredis as they
 * load, so this runs before anything imports them (src/tracing.ts, first in the entry
 * points). Unset, the SDK is not even loaded: the `require` below is the only way in.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): void {
  if (active || !tracingConfigured(env)) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startOpenTelemetry } = require('./open-telemetry') as typeof import('./open-telemetry');
  active = startOpenTelemetry(env);
}

/** The onRequest hook that puts each request's id on its spans; undefined when tracing is off. */
export function requestIdTracing(): onRequestHookHandler | undefined {
  return active?.traceRequestId;
}

/** Sends the spans still buffered; called on the way out. An unreachable collector does not fail the stop. */
export async function stopTracing(): Promise<void> {
  await active?.shutdown().catch(() => undefined);
}
