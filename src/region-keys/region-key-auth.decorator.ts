import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  Logger,
  OnModuleInit,
  SetMetadata,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef, Reflector } from '@nestjs/core';
import { ApiExtension, DECORATORS } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';

import { API_KEY_SECURITY_SCHEME, authenticateWith, authPolicy } from '../common/auth';
import { withRouteConfig } from '../common/http';
import { ForbiddenError, sendDomainError, UNAUTHENTICATED, UNAVAILABLE } from '../common/problem';
import { ApiTooManyRequests, RATE_LIMIT_HEADERS } from '../common/rate-limit';
import { ApiProblems } from '../common/swagger';
import { AppConfig } from '../config';
import { ApiKeyStrategy } from './api-key.strategy';
import { API_KEY_POLICY, KeyRateLimiter } from './key-rate-limiter';
import type { Permission } from './permissions';
import {
  ADDRESS_NOT_ALLOWED,
  AddressNotAllowedError,
  INSUFFICIENT_PERMISSION,
  InvalidApiKeyError,
  missingPermission,
  RATE_LIMIT_ABOVE_CALLER,
  tooManyKeyRequests,
} from './region-keys.errors';
import type { ChangeOrigin, RegionPrincipal } from './region-keys.types';

const REQUIRED_PERMISSION = 'regionKeyPermission';
/** What a route declares that any valid key of the region may call, whatever it holds. */
export const ANY_PERMISSION = 'any';
type RequiredPermission = Permission | typeof ANY_PERMISSION;
/** Fastify route config of the routes @RegionKeyAuth marks: see UnusableKeyRefusal. */
const REGION_KEY_ROUTE = 'regionKeyRoute';

/**
 * Authenticates the key, counts the request against the key's rate limit, then checks the
 * permission the route declares with @RegionKeyAuth(permission). Deny by default here too: a
 * route that has this guard by other means, with no permission, is refused instead of being
 * open to every key.
 *
 * Nest makes the guard in the module of each controller that uses @RegionKeyAuth(), and that
 * module need not import RegionKeysModule: the strategy is not injected but found once, at
 * start, as the application's one instance (RegionKeysModule's), never per request.
 */
@Injectable()
export class ApiKeyAuthGuard implements CanActivate, OnModuleInit {
  private readonly logger = new Logger(ApiKeyAuthGuard.name);
  private strategy!: ApiKeyStrategy;
  private rateLimiter!: KeyRateLimiter;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    // An application context (the operator CLI) serves no routes, and need not hold RegionKeysModule.
    if (!this.adapterHost.httpAdapter) return;
    this.strategy = this.moduleRef.get(ApiKeyStrategy, { strict: false });
    this.rateLimiter = this.moduleRef.get(KeyRateLimiter, { strict: false });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const required = this.reflector.get<RequiredPermission | undefined>(REQUIRED_PERMISSION, context.getHandler());
    if (!required) {
      this.logger.error(
        `${context.getClass().name}.${context.getHandler().name} declares no region key permission; refused`,
      );
      throw new ForbiddenError('This route is not available.');
    }
    const http = context.switchToHttp();
    const request = http.getRequest<{ user?: RegionPrincipal }>();
    const principal = await authenticateWith<RegionPrincipal>([this.strategy], request, http.getResponse());
    if (!principal) throw new InvalidApiKeyError();
    // Counted as soon as the key is known: every answer from here on, a 403 or a 429 included,
    // carries the key's RateLimit headers; a request no key was accepted for counts for none.
    http.getResponse<FastifyReply>().headers(await this.rateLimiter.take(principal));
    if (required !== ANY_PERMISSION && !principal.permissions.includes(required)) throw missingPermission(required);
    request.user = principal;
    return true;
  }
}

/**
 * Refuses a missing or malformed key (and a key of the other environment) in Fastify's last
 * hook before the handler, on the routes @RegionKeyAuth marks, and sends the 401 there:
 * through Nest's router, guards and exception layer the same refusal costs markedly more CPU
 * (docs/performance.md measures this answer, scenario 7b). Same check and answer as the strategy's, which makes it again on any route this hook
 * does not cover, and at the same point: after the body is parsed, before any handler. A
 * route that declares no permission is left to the guard, which refuses it with a 403
 * whatever the key.
 */
@Injectable()
export class UnusableKeyRefusal {
  private readonly baseUrl: string | undefined;

  constructor(
    private readonly strategy: ApiKeyStrategy,
    config: AppConfig,
  ) {
    this.baseUrl = config.ownBaseUrl;
  }

  /** The preHandler createApp puts on the HTTP edge (common/http/edge.ts). */
  readonly preHandler: preHandlerHookHandler = (request, reply, done) => {
    if ((request.routeOptions.config as unknown as Record<string, unknown>)[REGION_KEY_ROUTE] !== true) return done();
    const refusal = this.strategy.unusableKeyRefusal(request);
    // Answered here: passed on with done(error), it would go through Nest's exception layer after all.
    if (refusal) return sendDomainError(request, reply, refusal, this.baseUrl);
    done();
  };
}

/** The permission a route declares with @RegionKeyAuth (for the route-policy table). */
export const requiredPermissionOf = (handler: object): RequiredPermission | undefined =>
  Reflect.getMetadata(REQUIRED_PERMISSION, handler) as RequiredPermission | undefined;

/** The 403 of a route that gives a key what the caller's key has. */
const FASTER_RATE_LIMIT = {
  types: [RATE_LIMIT_ABOVE_CALLER],
  description:
    'The key asked for would have a faster `rateLimit` than the key making the request (`rate-limit-above-caller`).',
};

/** Answers sent before the key is counted (no key accepted yet): no RateLimit headers. */
const UNCOUNTED_STATUSES = new Set(['401', '408', '413', '415']);

/**
 * Declares the key's RateLimit headers on every answer of the operation sent once the key is
 * counted: its success and the problems after authentication (all declared below @RegionKeyAuth).
 */
const declareKeyRateLimitHeaders: MethodDecorator = (_target, key, descriptor) => {
  type Responses = Record<string, { headers?: Record<string, object> }>;
  const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) as Responses | undefined;
  if (!Object.keys(responses ?? {}).some((status) => status.startsWith('2')))
    throw new Error(`@RegionKeyAuth() on ${String(key)}: declare the success response below it`);
  for (const [status, response] of Object.entries(responses!)) {
    if (!UNCOUNTED_STATUSES.has(status)) response.headers = { ...RATE_LIMIT_HEADERS, ...response.headers };
  }
  return descriptor;
};

/**
 * The route requires a region API key (X-API-Key) that holds `permission` (`'any'`: any valid
 * key); the caller acts for that key's region. One per route: `@RegionKeyAuth('keys:write')`.
 * Declares the 401, the 403 of a missing permission or address (and `x-required-permission`),
 * the 429 of the key's rate limit and the 503, and the RateLimit headers on every answer after
 * authentication. `grants`: the route gives a key what the caller's key has (create, roll,
 * PATCH), and declares the 403 of a faster rate limit than the caller's.
 */
export const RegionKeyAuth = (
  permission: RequiredPermission,
  { grants = false }: { grants?: boolean } = {},
): MethodDecorator =>
  authPolicy('region-api-key', {
    guard: ApiKeyAuthGuard,
    schemes: [API_KEY_SECURITY_SCHEME],
    with: [
      SetMetadata(REQUIRED_PERMISSION, permission),
      withRouteConfig({ [REGION_KEY_ROUTE]: true }),
      ApiExtension('x-required-permission', permission),
      ApiProblems(
        permission === ANY_PERMISSION
          ? {
              types: [ADDRESS_NOT_ALLOWED],
              description: 'The key is used from an address outside its allowedCidrs.',
              examples: [() => new AddressNotAllowedError()],
            }
          : {
              types: [INSUFFICIENT_PERMISSION, ADDRESS_NOT_ALLOWED],
              description:
                `The key does not hold the ${permission} permission (\`insufficient-permission\`), or is used from an ` +
                'address outside its allowedCidrs (`address-not-allowed`).',
              examples: [() => missingPermission(permission)],
            },
        {
          types: [UNAUTHENTICATED],
          description: 'Missing, malformed, unknown or revoked API key.',
          examples: [() => new InvalidApiKeyError()],
        },
        UNAVAILABLE,
      ),
      ...(grants ? [ApiProblems(FASTER_RATE_LIMIT)] : []),
      ApiTooManyRequests(
        "The key made all the requests its rate limit allows in this window (its rateLimit, or the region's default); see Retry-After.",
        () => tooManyKeyRequests({ name: API_KEY_POLICY, limit: 600, windowSeconds: 60 }, 42),
      ),
      declareKeyRateLimitHeaders,
    ],
  });

/** The region and key that authenticated the request. */
export const CurrentRegion = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): RegionPrincipal =>
    ctx.switchToHttp().getRequest<{ user: RegionPrincipal }>().user,
);

/**
 * Who makes a change and from where, for the region's events: the authenticated key, the
 * client address (as the proxy settings resolve it) and the request id, as plain values.
 */
export const ChangeOriginOf = createParamDecorator((_: unknown, ctx: ExecutionContext): ChangeOrigin => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest & { user: RegionPrincipal }>();
  const { apiKeyId, tokenPreview } = request.user;
  return {
    actor: { type: 'api_key', apiKeyId, tokenPreview },
    clientAddress: request.ip,
    requestId: String(request.id),
  };
});
