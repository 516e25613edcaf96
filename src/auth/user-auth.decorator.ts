import { applyDecorators, createParamDecorator, ExecutionContext, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';

import { BASIC_SECURITY_SCHEME, BEARER_SECURITY_SCHEME, declareAuthPolicy } from '../common/auth';
import { UNAUTHENTICATED } from '../common/problem';
import { ApiLoginRateLimited } from '../common/rate-limit';
import { ApiProblems } from '../common/swagger';
import { UserUnauthenticatedError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { UserAuthGuard } from './user-auth.guard';

/** The route requires a signed-in user: Basic (email and password) or a Bearer token. */
export const UserAuth = () =>
  applyDecorators(
    declareAuthPolicy('user'),
    UseGuards(UserAuthGuard),
    // Two requirement objects: either scheme is enough (OpenAPI "OR").
    ApiSecurity(BASIC_SECURITY_SCHEME),
    ApiSecurity(BEARER_SECURITY_SCHEME),
    ApiProblems({
      types: [UNAUTHENTICATED],
      examples: [() => new UserUnauthenticatedError()],
      description:
        'Missing, wrong or expired credentials (Basic email:password, or a Bearer token from POST /auth/token).',
    }),
    ApiLoginRateLimited('Too many failed Basic sign-ins from this client for this email; see Retry-After.'),
  );

/** The user that authenticated the request. */
export const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedUser =>
    ctx.switchToHttp().getRequest<{ user: AuthenticatedUser }>().user,
);
