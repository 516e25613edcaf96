import { Transform } from 'class-transformer';
import { IsOptional, IsString } from 'class-validator';

import { emptyToUndefined } from '../../config';

/**
 * The server secret that kept answers are encrypted with is derived from JWT_SECRET (its
 * own HKDF info), so instances that share their token key share this one too. The auth
 * feature validates the variable; it is only read here.
 */
export class IdempotencySettings {
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_SECRET?: string;
}
