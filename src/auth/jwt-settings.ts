import { randomBytes } from 'node:crypto';

import { Logger } from '@nestjs/common';

import type { ApiEnvironment } from '../common/auth';
import type { AppConfig } from '../config';
import type { AuthSettings } from './auth.settings';

/** How user tokens are signed and checked; shared by the issuer and the Bearer strategy. */
export class JwtSettings {
  /** The only algorithm signed and accepted: never `none`, never a public-key algorithm. */
  static readonly ALGORITHM = 'HS256' as const;

  /**
   * The clock skew a Bearer token is allowed, in seconds: its `iat` may be this far ahead of
   * this instance's clock (the instance that issued it may run ahead), and its lifetime
   * (`exp` − `iat`) this much longer than JWT_TTL. Anything further is refused, so that even
   * a holder of the secret cannot make a token that outlives the configured lifetime.
   */
  static readonly CLOCK_SKEW_SECONDS = 30;

  private constructor(
    /** The HS256 secret, as text: the issuer signs with it and JwtStrategy's verifier makes its key of it once. */
    readonly secret: string,
    readonly ttlSeconds: number,
    readonly issuer: string | undefined,
    readonly audience: string | undefined,
    /** Sandbox tokens say so (claim `env`), so that a sandbox never signs in a live user by mistake. */
    readonly environment: ApiEnvironment,
  ) {}

  /** Production requires JWT_SECRET (config validation enforces it); elsewhere one is made up. */
  static fromSettings(settings: AuthSettings, config: AppConfig): JwtSettings {
    let secret = settings.JWT_SECRET;
    if (!secret) {
      secret = randomBytes(32).toString('base64url');
      new Logger(JwtSettings.name).warn(
        'JWT_SECRET is not set: tokens are signed with a random secret made at start. They stop working on restart ' +
          'and are not accepted by other instances. Set JWT_SECRET (required in production).',
      );
    }
    return new JwtSettings(
      secret,
      settings.JWT_TTL,
      settings.JWT_ISSUER,
      settings.JWT_AUDIENCE,
      config.API_ENVIRONMENT,
    );
  }
}
