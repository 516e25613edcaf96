import type { AppConfig } from '../../config/app-config';

/**
 * Limits of Node's HTTP server, which Fastify leaves off. A client gets REQUEST_TIMEOUT_MS
 * to send its whole request, headers and body: one that stops sending (a body that never
 * ends, headers that never finish) is answered 408 by clientErrorHandler and its
 * connection closed, instead of holding a socket and a request forever. Node checks the
 * limit every connectionsCheckingInterval, so that is kept well below it.
 *
 * Node's own answer to a request without Host is an empty 400; requireHostHeader is off
 * so that the Host check in the HTTP hooks answers with a problem document instead.
 */
export function httpServerLimits(config: Pick<AppConfig, 'REQUEST_TIMEOUT_MS'>) {
  const timeout = config.REQUEST_TIMEOUT_MS;
  return {
    requestTimeout: timeout,
    http: {
      headersTimeout: timeout,
      connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(timeout / 4))),
      requireHostHeader: false,
    },
  };
}
