import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';

import type { AuthenticatedUser } from '../authenticated-user';
import { JwtSettings } from '../jwt-settings';
import { type TokenClaims, TokenService } from '../token.service';

export const JWT_STRATEGY = 'jwt';

/** `Authorization: Bearer <jwt>`: HS256 only, `exp` enforced, `iss`/`aud` when configured. */
// The whole header must be "Bearer <jwt>": passport-jwt's own extractor takes the first
// word after the scheme and ignores whatever follows it.
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;
const bearerToken = (request: { headers: Record<string, string | string[] | undefined> }): string | null => {
  const header = request.headers.authorization;
  return typeof header === 'string' ? (BEARER.exec(header)?.[1] ?? null) : null;
};

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(
    settings: JwtSettings,
    private readonly tokens: TokenService,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // A key object, not the secret string: given a string, jsonwebtoken first tries to
      // read it as a public key (which throws) and then makes a secret key of it, on every
      // request. passport-jwt hands the key to jsonwebtoken as it is; its types predate KeyObject.
      secretOrKey: settings.key as unknown as Buffer,
      // An explicit list: a token naming any other algorithm ("none" included) is refused.
      algorithms: [JwtSettings.ALGORITHM],
      ignoreExpiration: false,
      ...(settings.issuer ? { issuer: settings.issuer } : {}),
      ...(settings.audience ? { audience: settings.audience } : {}),
    });
  }

  validate(claims: TokenClaims): Promise<AuthenticatedUser | null> {
    return this.tokens.userFor(claims);
  }
}
