import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createVerifier } from 'fast-jwt';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';

import type { AuthenticatedUser } from '../authenticated-user';
import { JwtSettings } from '../jwt-settings';
import { type TokenClaims, TokenService } from '../token.service';

export const JWT_STRATEGY = 'jwt';

// The whole header must be "Bearer <jwt>": a header with anything after the token is no token.
// One space or more after the scheme (RFC 9110's 1*SP), as Basic takes.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;
// An HS256 signature is 32 bytes: 43 base64url characters, the last of which carries 4 bits,
// so its 2 low bits are zero. fast-jwt decodes the signature to bytes before comparing, and
// base64 decoding ignores those 2 bits: without this check four spellings of one signature
// would pass. Only the canonical one is accepted, as jsonwebtoken (comparing text) did.
const HS256_SIGNATURE = /\.[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

const bearerToken = (request: FastifyRequest): string | null => {
  const header = request.headers.authorization;
  const token = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
  return token !== undefined && HS256_SIGNATURE.test(token) ? token : null;
};

/**
 * `Authorization: Bearer <jwt>`: HS256 only, `iat` and `exp` required, the token's lifetime
 * bounded (withinLifetime), `iss`/`aud` required and checked when configured. Any refusal
 * (no or malformed header, bad signature, another algorithm, expired, not yet valid, issued
 * in the future, too long-lived, wrong claims) makes validate() return null, and
 * passport-custom fails the strategy: the guard then gives its one 401 naming both schemes.
 *
 * The token is checked by fast-jwt, not by passport-jwt's jsonwebtoken: its verifier is
 * built once, here, with the key and the checks prepared, and it remembers tokens it has
 * verified. jsonwebtoken (with jws and jwa) checks its options and the key again on every
 * call, work a Bearer request need not repeat.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  private readonly verify: (token: string) => TokenClaims;
  private readonly maxLifetimeSeconds: number;

  constructor(
    settings: JwtSettings,
    private readonly tokens: TokenService,
  ) {
    super();
    const { issuer, audience } = settings;
    this.maxLifetimeSeconds = settings.ttlSeconds + JwtSettings.CLOCK_SKEW_SECONDS;
    this.verify = createVerifier({
      // The secret as text: fast-jwt makes a secret key object of it once, here. It refuses
      // a KeyObject, and a string or Buffer are alike once made into its key.
      key: settings.secret,
      // An explicit list: a token naming any other algorithm ("none", HS512, RS256) is
      // refused, and the secret is never read as a public key.
      algorithms: [JwtSettings.ALGORITHM],
      // fast-jwt checks iss and aud only when the token has them: required when configured,
      // so that a token without them is refused, as jsonwebtoken did.
      requiredClaims: ['iat', 'exp', ...(issuer ? ['iss'] : []), ...(audience ? ['aud'] : [])],
      ...(issuer ? { allowedIss: issuer } : {}),
      ...(audience ? { allowedAud: audience } : {}),
      // No leeway for exp and nbf. fast-jwt counts in milliseconds: it still takes a token
      // during the one millisecond at which its exp second begins; jsonwebtoken refused it
      // from then on.
      clockTolerance: 0,
      // Recently verified tokens are remembered (an LRU of 1000, keyed by a hash of the
      // token), so a client's next request with the same token skips the decoding, the HMAC
      // and the claim checks. An entry is used only from the token's nbf to its exp (and
      // for at most fast-jwt's default 10 minutes): past exp the token is verified again,
      // and refused. A failure is never answered from the cache (it does take a slot, so a
      // flood of bad tokens costs only the hits). A hit returns the claims object of the
      // first verification, shared between requests: read it, never change it.
      cache: 1000,
    });
  }

  validate(request: FastifyRequest): Promise<AuthenticatedUser | null> | null {
    const token = bearerToken(request);
    if (token === null) return null;
    let claims: TokenClaims;
    try {
      claims = this.verify(token);
    } catch {
      // Every refusal alike (fast-jwt's TokenError, whatever its code): passport-jwt failed
      // the strategy on any verification error too.
      return null;
    }
    return this.withinLifetime(claims) ? this.tokens.userFor(claims) : null;
  }

  /**
   * fast-jwt checks `exp` and `nbf` against the clock, but neither where `iat` stands nor how
   * far `exp` is from it: a token signed with `exp` in the year 5000, or `iat` a year ahead,
   * would pass. Checked on every request, cached verifications included, as it depends on the clock.
   */
  private withinLifetime({ iat, exp }: TokenClaims): boolean {
    return (
      typeof iat === 'number' &&
      typeof exp === 'number' &&
      iat <= Date.now() / 1000 + JwtSettings.CLOCK_SKEW_SECONDS &&
      exp - iat <= this.maxLifetimeSeconds
    );
  }
}
