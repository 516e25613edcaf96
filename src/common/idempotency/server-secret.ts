import { Transform } from 'class-transformer';
import { IsOptional, IsString } from 'class-validator';

import { emptyToUndefined } from '../../config';

/**
 * The server secret that kept answers are encrypted with is derived from JWT_SECRET (its
 * own HKDF info), so instances that share their token key share this one too. Not a
 * settings class of its own (no *.settings.ts, not in FEATURE_SETTINGS): the variable is
 * the auth feature's, which documents and validates it at boot; it is only read here.
 */
export class ServerSecret {
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_SECRET?: string;
}
