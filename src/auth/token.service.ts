import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';

import { INT4_MAX } from '../database';
import { UsersService } from '../users';
import { toAuthenticatedUser } from './auth.service';
import type { AuthenticatedUser } from './authenticated-user';
import { JwtSettings } from './jwt-settings';

/** The claims this service puts in a token; the signature and `exp` are checked by JwtStrategy (fast-jwt). */
export interface TokenClaims {
  sub?: unknown;
  iat?: unknown;
  exp?: unknown;
  /** `sandbox` on a sandbox's tokens; absent on live ones (so tokens issued before it still work). */
  env?: unknown;
}

const USER_ID = /^[1-9][0-9]{0,9}$/;

/** Issues user tokens (JWT, HS256, `sub` = user id) and resolves verified ones to users. */
@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly settings: JwtSettings,
    private readonly users: UsersService,
  ) {}

  issue(user: AuthenticatedUser): Promise<string> {
    const { secret, ttlSeconds, issuer, audience, environment } = this.settings;
    return this.jwt.signAsync(environment === 'sandbox' ? { env: 'sandbox' } : {}, {
      secret,
      algorithm: JwtSettings.ALGORITHM,
      subject: String(user.id),
      expiresIn: ttlSeconds,
      // jsonwebtoken refuses an option that is present but undefined.
      ...(issuer ? { issuer } : {}),
      ...(audience ? { audience } : {}),
    });
  }

  /**
   * The user a verified token names, or null: the user may have been deleted since.
   * A token without `exp` is refused, though only a holder of the secret could make one.
   */
  async userFor(claims: TokenClaims): Promise<AuthenticatedUser | null> {
    if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || !USER_ID.test(claims.sub)) return null;
    // A token of the other environment names a user of another database: never that user here,
    // even where an operator gave both environments one JWT_SECRET.
    if ((claims.env === 'sandbox' ? 'sandbox' : 'live') !== this.settings.environment) return null;
    const id = Number(claims.sub);
    if (id > INT4_MAX) return null;
    const user = await this.users.findById(id);
    return user ? toAuthenticatedUser(user) : null;
  }
}
