import { Injectable } from '@nestjs/common';
import type { FastifyInstance, onRouteHookHandler, RouteOptions } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/** Methods a client may be told about in Allow; OPTIONS is answered only to CORS preflights. */
const LISTED = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const ORDER = new Map<string, number>(LISTED.map((method, i) => [method, i]));

/**
 * Which methods the server really has for a concrete path, for the 405's Allow header.
 * Fastify's router looks routes up by template only, so every route the server declares is
 * copied, as it is declared, into a router of the same kind with the same options, which
 * can be asked about a URL. Catch-all routes (CORS preflight's `OPTIONS *`) are left out:
 * they would make every path look known.
 */
@Injectable()
export class RouteMethods {
  private router = FindMyWay<FindMyWay.HTTPVersion.V1>();
  private readonly methods = new Set<HTTPMethod>();
  /** The methods of each route without parameters, by its path (`/auth/region/api-keys/current`). */
  private readonly literal = new Map<string, HTTPMethod[]>();
  /** Whether a route with parameters matches some literal path, by its URL. */
  private readonly shadowing = new Map<string, boolean>();

  /**
   * The onRoute hook that copies each route `fastify` declares, registered (edge.ts) before
   * any route is declared: a hook sees only the routes declared after it.
   */
  copyRoutesOf(fastify: FastifyInstance): onRouteHookHandler {
    // The matching options of Fastify's own router, top-level or in routerOptions.
    const initial = fastify.initialConfig as Record<string, unknown> & { routerOptions?: Record<string, unknown> };
    const option = <T>(name: string): T | undefined =>
      (initial.routerOptions?.[name] ?? initial[name]) as T | undefined;
    this.router = FindMyWay({
      caseSensitive: option<boolean>('caseSensitive'),
      ignoreTrailingSlash: option<boolean>('ignoreTrailingSlash'),
      ignoreDuplicateSlashes: option<boolean>('ignoreDuplicateSlashes'),
      maxParamLength: option<number>('maxParamLength'),
      useSemicolonDelimiter: option<boolean>('useSemicolonDelimiter'),
    } as FindMyWay.Config<FindMyWay.HTTPVersion.V1>);
    return (route) => this.add(route);
  }

  /** Every method some route has, in the same order: what a CORS preflight may allow. */
  declared(): string[] {
    return LISTED.filter((method) => this.methods.has(method));
  }

  /**
   * The methods of the route without parameters at `path`, for a request there that reached a
   * route with a parameter instead (`DELETE /api-keys/current` finding
   * `DELETE /api-keys/:id`): that path names the literal route's resource, so the request is a
   * 405 with these, not a request for an item called `current`. Undefined otherwise.
   */
  shadowedAt(routeUrl: string, path: () => string): string[] | undefined {
    let shadows = this.shadowing.get(routeUrl);
    if (shadows === undefined) {
      // Settled once a route: whether any literal path is one its pattern matches.
      const pattern = new RegExp(`^${routeUrl.replace(/:[^/]+/g, '[^/]+')}$`);
      shadows = [...this.literal.keys()].some((literal) => pattern.test(literal));
      this.shadowing.set(routeUrl, shadows);
    }
    const literal = shadows ? this.literal.get(path()) : undefined;
    return literal && LISTED.filter((method) => literal.includes(method));
  }

  /**
   * The methods routes exist for at `path` (its query string ignored), in a stable order; empty
   * when none. A path a route without parameters has is that route's only.
   */
  allowedAt(path: string): string[] {
    const literal = this.literal.get(path);
    if (literal) return LISTED.filter((method) => literal.includes(method));
    const allowed: string[] = [];
    for (const method of LISTED) {
      if (!this.methods.has(method)) continue;
      try {
        const found = this.router.find(method, path);
        // Nest answers a route whose parameter would be empty (`/planets/`) as not found.
        if (found && !Object.entries(found.params).some(([name, value]) => value === '' && name !== '*'))
          allowed.push(method);
      } catch {
        // A path the router cannot decode has no route under any method.
        return [];
      }
    }
    return allowed;
  }

  private add(route: RouteOptions): void {
    if (/^\/?\*$/.test(route.url)) return;
    for (const method of [route.method].flat()) {
      const upper = method.toUpperCase() as HTTPMethod;
      if (!ORDER.has(upper) || this.router.hasRoute(upper, route.url)) continue;
      this.router.on(upper, route.url, () => undefined);
      this.methods.add(upper);
      if (!/[:*]/.test(route.url)) this.literal.set(route.url, [...(this.literal.get(route.url) ?? []), upper]);
    }
  }
}
