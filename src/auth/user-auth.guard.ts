import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Strategy } from 'passport';

import { authenticateWith } from '../common/auth';
import { UserUnauthenticatedError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { BasicStrategy } from './strategies/basic.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';

/**
 * Passport tries Basic, then Bearer; each strategy steps aside (fails) when the
 * Authorization header is not its scheme. When both fail, the client gets one 401 naming
 * both schemes, whatever the reason, so the answer says nothing of which part was wrong.
 * Errors a strategy throws on purpose (429 for too many failed Basic attempts) pass as they are.
 * The strategies are this application's own instances (see authenticateWith).
 */
@Injectable()
export class UserAuthGuard implements CanActivate {
  private strategies?: Strategy[];

  constructor(private readonly moduleRef: ModuleRef) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<{ user?: AuthenticatedUser }>();
    const user = await this.authenticate(request, http.getResponse());
    if (!user) throw new UserUnauthenticatedError();
    request.user = user;
    return true;
  }

  private authenticate(request: unknown, response: unknown): Promise<AuthenticatedUser | false> {
    this.strategies ??= [BasicStrategy, JwtStrategy].map((type) =>
      this.moduleRef.get<Strategy>(type, { strict: false }),
    );
    return authenticateWith<AuthenticatedUser>(this.strategies, request, response);
  }
}
