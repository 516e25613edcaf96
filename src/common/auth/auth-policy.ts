import {
  applyDecorators,
  type CanActivate,
  ExecutionContext,
  Injectable,
  Logger,
  SetMetadata,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiSecurity } from '@nestjs/swagger';

import { ForbiddenError } from '../problem/problem';

export const AUTH_POLICY = 'authPolicy';

/** The ways a route can be reached. Every route names exactly one. */
export type AuthPolicy = 'public' | 'region-api-key' | 'user';

/** Marks a route (or controller) as reachable without credentials. */
export const Public = () => SetMetadata(AUTH_POLICY, 'public' satisfies AuthPolicy);

/** What a policy decorator declares besides its name (see authPolicy). */
export interface AuthPolicyParts {
  /** Checks the credentials and puts the principal on the request. */
  guard: Type<CanActivate>;
  /** OpenAPI security schemes (security-schemes.ts), any one of which is enough. */
  schemes: string[];
  /** What else the policy declares: the answers it implies (401, 403, 429, 503), its route metadata. */
  with: (ClassDecorator | MethodDecorator)[];
}

/**
 * The building block of a feature's policy decorator (UserAuth, RegionKeyAuth): in one
 * declaration, the policy the AuthPolicyGuard and the route table read, the guard that checks
 * it, its security schemes and the answers it implies, so that a route says who may call it
 * once and its document follows.
 */
export const authPolicy = (policy: Exclude<AuthPolicy, 'public'>, parts: AuthPolicyParts) =>
  applyDecorators(
    SetMetadata(AUTH_POLICY, policy),
    UseGuards(parts.guard),
    // One requirement object per scheme: either is enough (OpenAPI "OR").
    ...parts.schemes.map((scheme) => ApiSecurity(scheme)),
    ...parts.with,
  );

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
