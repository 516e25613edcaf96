import { Transform } from 'class-transformer';
import { IsOptional, IsString, MinLength, ValidateIf } from 'class-validator';

import { appConfigOf, emptyToUndefined, IntSetting, NodeEnv } from '../config';

/** The settings of signing in: user tokens and the Basic verification cache. */
export class AuthSettings {
  /** HS256 key for user tokens. Required in production; elsewhere a random one is made at boot. */
  @Transform(emptyToUndefined)
  @ValidateIf((s: AuthSettings) => appConfigOf(s).NODE_ENV === NodeEnv.Production || s.JWT_SECRET !== undefined)
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters long' })
  @IsString({ message: 'JWT_SECRET must be set in production' })
  JWT_SECRET?: string;

  /** Lifetime of a user token, in seconds. */
  @IntSetting({ min: 1 })
  JWT_TTL = 3600;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_ISSUER?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_AUDIENCE?: string;

  /** How long a successful Basic verification is remembered (0 turns the cache off). */
  @IntSetting({ min: 0 })
  BASIC_AUTH_CACHE_TTL_SECONDS = 300;

  @IntSetting({ min: 1 })
  BASIC_AUTH_CACHE_MAX_ENTRIES = 10000;
}
