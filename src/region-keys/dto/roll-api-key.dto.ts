import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

import { IsOmittable } from '../../common/validation';
import { CreateApiKeyDto } from './create-api-key.dto';

export const DEFAULT_REVOKE_OLD_AFTER_SECONDS = 86_400;
export const MAX_REVOKE_OLD_AFTER_SECONDS = 604_800;

/**
 * As for a new key, but an absent allowedCidrs keeps the old key's allowlist (null clears
 * it); absent permissions are still the caller's, as for a create.
 */
@ApiSchema({ name: 'RollApiKeyInput' })
export class RollApiKeyDto extends CreateApiKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_REVOKE_OLD_AFTER_SECONDS,
    default: DEFAULT_REVOKE_OLD_AFTER_SECONDS,
    description:
      'How long the old key keeps working, in seconds (at most a week). 0 revokes it at once, as a DELETE would.',
    example: 3600,
  })
  // Absent means the default; null is not a number of seconds.
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(MAX_REVOKE_OLD_AFTER_SECONDS)
  revokeOldAfterSeconds?: number;
}
