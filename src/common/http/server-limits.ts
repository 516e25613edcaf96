import type { AppConfig } from '../../config/app-config';

/**
 * Limits of Node's HTTP server, which Fastify leaves off. A client gets REQUEST_TIMEOUT_MS
 * to send its whole request, headers and body: one that stops sending (a body that never
 * ends, headers that never finish) is answered 408 by clientErrorHandler and its
 * connection closed, instead of holding a socket and a request forever. Node checks the
 * limit only every connectionsCheckingInterval (a walk over the open connections), so a
 * client is cut between the limit and the limit plus that interval: at most half a second
 * keeps the promise of "within a second" at the cost of two cheap walks a second.
 *
 * Node's own answer to a request without Host is an empty 400; requireHostHeader is off
 * so that the Host check in the HTTP hooks answers with a problem document instead.
 */
/** How often Node looks for requests past their time (see httpServerLimits). */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 500;

export function httpServerLimits(config: Pick<AppConfig, 'REQUEST_TIMEOUT_MS'>) {
  const timeout = config.REQUEST_TIMEOUT_MS;
  return {
    requestTimeout: timeout,
    http: {
      headersTimeout: timeout,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      requireHostHeader: false,
    },
  };
}
