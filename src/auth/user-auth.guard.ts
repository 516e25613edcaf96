import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import passport, { type Strategy } from 'passport';
import { UserUnauthenticatedError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { BasicStrategy } from './strategies/basic.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';

/**
 * Passport tries Basic, then Bearer; each strategy steps aside (fails) when the
 * Authorization header is not its scheme. When both fail, the client gets one 401 naming
 * both schemes, whatever the reason, so the answer says nothing of which part was wrong.
 * Errors a strategy throws on purpose (429 for too many failed Basic attempts) pass as they are.
 *
 * Not @nestjs/passport's AuthGuard: that one looks strategies up by name in the
 * process-wide passport registry, where the last application created wins, so a second
 * app in one process (tests run two against one Redis) would authenticate the first
 * app's requests with its own services, and with closed ones once it stops. This guard
 * uses the strategy instances of its own application.
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
    this.strategies ??= [BasicStrategy, JwtStrategy].map((type) => this.moduleRef.get<Strategy>(type, { strict: false }));
    // Passport keeps a request's callbacks on the strategy object itself, so each request
    // gets an object of its own (what passport does for strategies named by string).
    const perRequest = this.strategies.map((strategy) => Object.create(strategy) as Strategy);
    return new Promise((resolve, reject) => {
      // passport takes a list of strategy objects; its type definitions know only names.
      const strategies = perRequest as unknown as Strategy;
      const authenticate = passport.authenticate(strategies, { session: false }, (err: unknown, user: AuthenticatedUser | false) =>
        err ? reject(err) : resolve(user),
      );
      authenticate(request, response, (err: unknown) => reject(err ?? new UserUnauthenticatedError()));
    });
  }
}
