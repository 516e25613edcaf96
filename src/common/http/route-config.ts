import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * Adds entries to a route's Fastify config (`request.routeOptions.config`), beside those of
 * any other decorator on the same handler. Nest's own @RouteConfig() replaces the whole config,
 * so two decorators using it would drop each other's entries (a secret response would lose its
 * "never compressed" flag): every decorator that sets route config goes through this instead.
 */
export const withRouteConfig =
  (entries: Record<string, unknown>): MethodDecorator =>
  (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const config =
      (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined) ?? {};
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...config, ...entries }, handler);
    return descriptor;
  };

/**
 * An entry of a route's Fastify config, as an onRoute hook sees it (`route.config`) or a
 * request hook (`request.routeOptions.config`); undefined when the route has none.
 */
export const routeConfigEntry = (config: unknown, name: string): unknown =>
  (config as Record<string, unknown> | undefined)?.[name];
