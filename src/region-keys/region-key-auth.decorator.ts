import type { FastifyRequest } from 'fastify';
import { applyDecorators, CanActivate, createParamDecorator, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { authenticateWith } from '../common/auth/authenticate-with';
import { ApiSecurity } from '@nestjs/swagger';
import { declareAuthPolicy } from '../common/auth/auth-policy';
import { ApiProblems } from '../common/swagger/api-problems.decorator';
import { ApiKeyStrategy } from './api-key.strategy';
import { InvalidApiKeyError } from './region-keys.errors';
import type { ChangeOrigin, RegionPrincipal } from './region-keys.service';
import { API_KEY_SECURITY_SCHEME } from '../common/auth/security-schemes';


@Injectable()
export class ApiKeyAuthGuard implements CanActivate {
  constructor(private readonly strategy: ApiKeyStrategy) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<{ user?: RegionPrincipal }>();
    const principal = await authenticateWith<RegionPrincipal>([this.strategy], request, http.getResponse());
    if (!principal) throw new InvalidApiKeyError();
    request.user = principal;
    return true;
  }
}

/** The route requires a region API key (X-API-Key); the caller acts for that key's region. */
export const RegionKeyAuth = () =>
  applyDecorators(
    declareAuthPolicy('region-api-key'),
    UseGuards(ApiKeyAuthGuard),
    ApiSecurity(API_KEY_SECURITY_SCHEME),
    ApiProblems(
      { status: 401, description: 'Missing, malformed, unknown or revoked API key.' },
      { status: 503, description: 'The database is busy or unavailable; retry after the time given in Retry-After.' },
    ),
  );

/** The region and key that authenticated the request. */
export const CurrentRegion = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): RegionPrincipal => ctx.switchToHttp().getRequest().user,
);

/**
 * Who makes a change and from where, for the region's events: the authenticated key, the
 * client address (as the proxy settings resolve it) and the request id, as plain values.
 */
export const ChangeOriginOf = createParamDecorator((_: unknown, ctx: ExecutionContext): ChangeOrigin => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest & { user: RegionPrincipal }>();
  const { apiKeyId, tokenPreview } = request.user;
  return { actor: { type: 'api_key', apiKeyId, tokenPreview }, clientAddress: request.ip, requestId: String(request.id) };
});
