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

/**
 * How long an idle kept-alive connection stays open. Whichever side closes an idle
 * connection races a request the other may be sending on it at that moment, which then
 * fails unsent; so the side that sends must be the one that gives up first. The balancer
 * closes its idle connections to an instance within a few of its pool-purge-delay periods
 * (deploy/haproxy.cfg: 5 s), far below this (test/unit/balancer.spec.ts holds the two apart).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export function httpServerLimits(config: Pick<AppConfig, 'REQUEST_TIMEOUT_MS'>) {
  const timeout = config.REQUEST_TIMEOUT_MS;
  return {
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: timeout,
    http: {
      headersTimeout: timeout,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      requireHostHeader: false,
    },
  };
}
