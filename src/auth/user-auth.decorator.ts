import { createParamDecorator, ExecutionContext } from '@nestjs/common';

import { authPolicy, BASIC_SECURITY_SCHEME, BEARER_SECURITY_SCHEME } from '../common/auth';
import { UNAUTHENTICATED } from '../common/problem';
import { ApiProblems } from '../common/swagger';
import { ApiLoginRateLimited, UserUnauthenticatedError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { UserAuthGuard } from './user-auth.guard';

/**
 * The route requires a signed-in user: Basic (email and password) or a Bearer token. Declares
 * the 401, and the 429 and 503 of the failed sign-in limit that Basic credentials meet.
 */
export const UserAuth = () =>
  authPolicy('user', {
    guard: UserAuthGuard,
    schemes: [BASIC_SECURITY_SCHEME, BEARER_SECURITY_SCHEME],
    with: [
      ApiProblems({
        types: [UNAUTHENTICATED],
        examples: [() => new UserUnauthenticatedError()],
        description:
          'Missing, wrong or expired credentials (Basic email:password, or a Bearer token from POST /auth/token).',
      }),
      ApiLoginRateLimited('Too many failed sign-ins from this client, for this email or for any; see Retry-After.'),
    ],
  });

/** The user that authenticated the request. */
export const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedUser =>
    ctx.switchToHttp().getRequest<{ user: AuthenticatedUser }>().user,
);
