import { CanActivate, ExecutionContext, Injectable, Logger, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { ForbiddenError } from '../problem/problem';

export const AUTH_POLICY = 'authPolicy';

/** The ways a route can be reached. Every route names exactly one. */
export type AuthPolicy = 'public' | 'region-api-key' | 'user';

/** Marks a route (or controller) as reachable without credentials. */
export const Public = () => SetMetadata(AUTH_POLICY, 'public' satisfies AuthPolicy);

/** Used by the policy decorators of each feature (RegionKeyAuth, UserAuth). */
export const declareAuthPolicy = (policy: AuthPolicy) => SetMetadata(AUTH_POLICY, policy);

/**
 * Deny by default. Runs before any route guard: a route whose handler and controller
 * declare no policy is refused, so a forgotten decorator closes a route instead of
 * opening it. The policy's own guard (attached by its decorator) does the checking.
 */
@Injectable()
export class AuthPolicyGuard implements CanActivate {
  private readonly logger = new Logger(AuthPolicyGuard.name);

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const policy = this.reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (policy) return true;
    this.logger.error(`${context.getClass().name}.${context.getHandler().name} declares no auth policy; refused`);
    throw new ForbiddenError('This route is not available.');
  }
}
