import { CanActivate, ExecutionContext, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
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
 *
 * Nest makes the guard in the module of each controller that uses @UserAuth(), and that
 * module need not import AuthModule: the strategies are found once, at start, as AuthModule's
 * instances, never per request.
 */
@Injectable()
export class UserAuthGuard implements CanActivate, OnModuleInit {
  private strategies!: Strategy[];

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    // An application context (the operator CLI) serves no routes, and need not hold AuthModule.
    if (!this.adapterHost.httpAdapter) return;
    this.strategies = [BasicStrategy, JwtStrategy].map((type) => this.moduleRef.get<Strategy>(type, { strict: false }));
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<{ user?: AuthenticatedUser }>();
    const user = await this.authenticate(request, http.getResponse());
    if (!user) throw new UserUnauthenticatedError();
    request.user = user;
    return true;
  }

  private authenticate(request: unknown, response: unknown): Promise<AuthenticatedUser | false> {
    return authenticateWith<AuthenticatedUser>(this.strategies, request, response);
  }
}
