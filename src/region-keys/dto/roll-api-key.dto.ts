import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

import { ApiInteger } from '../../common/swagger';
import { IsOmittable } from '../../common/validation';
import type { Permission } from '../permissions';
import { CreateApiKeyDto, RATE_LIMIT_RULE } from './create-api-key.dto';
import { KeyRateLimitDto } from './key-rate-limit.dto';

export const DEFAULT_REVOKE_OLD_AFTER_SECONDS = 86_400;
export const MAX_REVOKE_OLD_AFTER_SECONDS = 604_800;

/**
 * As for a new key, validated alike, but what is left out is the old key's: a roll replaces
 * a key, so left out it never widens one (only the documented defaults differ here). A redeclared
 * field states its schema in a decorator: the plugin's reading of it would give way to what
 * the parent class declares.
 */
@ApiSchema({ name: 'RollApiKeyInput' })
export class RollApiKeyDto extends CreateApiKeyDto {
  @ApiPropertyOptional({
    type: [String],
    description:
      "What the new key may do. Absent: the old key's permissions, so rolling a read-only key gives a read-only " +
      'key. Never more than the key making the request holds: asking for more, or rolling a key that holds ' +
      'more than it when none are asked for, is a 403 `insufficient-permission`; an empty list is a 400.',
  })
  declare permissions?: Permission[];

  @ApiPropertyOptional({
    type: [String],
    description:
      "The networks the new key may be used from, as on create. Absent: the old key's allowlist; null: any " +
      'address; an empty list is a 400.',
  })
  declare allowedCidrs?: string[] | null;

  @ApiPropertyOptional({
    type: 'string',
    description:
      "When the new key stops working by itself. Absent: the old key's expiry (left out, a roll never widens a key); null: " +
      "never. Rolling the region's last permanent key holding `region:read` and `keys:write` into a key that expires is refused " +
      '(`last-api-key`).',
  })
  declare expiresAt?: string | null;

  @ApiPropertyOptional({
    type: KeyRateLimitDto,
    description: `The new key's own rate limit. Absent: the old key's (rolling it so must be allowed too). ${RATE_LIMIT_RULE}`,
  })
  declare rateLimit?: KeyRateLimitDto | null;

  /**
   * How long the old key keeps working, in seconds (at most a week). 0 revokes it at once, as a DELETE would. A key rolling itself: at least 60, so that it can retry the roll (less is a 400).
   * @example 3600
   */
  // Absent means the default; null is not a number of seconds. The plugin reads a validator's
  // bound only when it is written as a number.
  @ApiInteger({ maximum: MAX_REVOKE_OLD_AFTER_SECONDS, default: DEFAULT_REVOKE_OLD_AFTER_SECONDS })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(MAX_REVOKE_OLD_AFTER_SECONDS)
  revokeOldAfterSeconds?: number;
}
