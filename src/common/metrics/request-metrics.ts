import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRouteHookHandler } from 'fastify';

import type { PrometheusMetrics } from './prometheus-metrics';
import type { DurationSeries } from './request-durations';

/** The route label of requests no route matched: one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

// Any other method (Node accepts a few dozen) counts as one, as OpenTelemetry's conventions say.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const OTHER_METHOD = '_OTHER';
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

type OnResponse = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * The series of one method and route, one per status class, made once so a request only
 * observes its duration (the request counter is read from the histogram's counts).
 */
class RouteSeries {
  private readonly byClass: DurationSeries[];

  constructor(metrics: PrometheusMetrics, method: string, route: string) {
    this.byClass = STATUS_CLASSES.map((statusClass) => metrics.durations.labels(method, route, statusClass));
  }

  record(reply: FastifyReply): void {
    this.byClass[((reply.statusCode / 100) | 0) - 1]?.observe(reply.elapsedTime / 1000);
  }
}

function seriesByMethod(
  metrics: PrometheusMetrics,
  methods: readonly string[],
  route: string,
): Record<string, RouteSeries> {
  const byMethod = Object.create(null) as Record<string, RouteSeries>;
  for (const method of methods)
    byMethod[method] = new RouteSeries(metrics, METHODS.includes(method) ? method : OTHER_METHOD, route);
  return byMethod;
}

/** The hooks that count and time requests, registered by the edge (common/http/edge.ts). */
export interface RequestMetricsHooks {
  /** Gives each route its own onResponse hook; registered before the routes are declared. */
  onRoute: onRouteHookHandler;
  /** Counts the requests no route matched. */
  onResponse: OnResponse;
}

/**
 * Counts and times every response by method, route template and status class. Each route
 * gets its own onResponse hook holding its series, made when the route is registered, so a
 * request costs a histogram update: no route lookup, no label building.
 * Requests no route matched share the UNMATCHED_ROUTE series, so that clients sending made-up
 * URLs cannot add series.
 */
export function requestMetricsHooks(metrics: PrometheusMetrics): RequestMetricsHooks {
  const unmatched = seriesByMethod(metrics, METHODS, UNMATCHED_ROUTE);
  const other = new RouteSeries(metrics, OTHER_METHOD, UNMATCHED_ROUTE);
  return {
    onRoute: (route) => {
      const byMethod = seriesByMethod(metrics, ([] as string[]).concat(route.method), route.url);
      const hook: OnResponse = (request, reply, done) => {
        byMethod[request.method]?.record(reply);
        done();
      };
      // The routes' own onResponse hooks are callback-style, like this one.
      route.onResponse = [...([] as OnResponse[]).concat((route.onResponse as OnResponse | OnResponse[]) ?? []), hook];
    },
    onResponse: (request, reply, done) => {
      if (request.is404) (unmatched[request.method] ?? other).record(reply);
      done();
    },
  };
}
