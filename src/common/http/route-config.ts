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
