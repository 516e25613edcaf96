import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

import type { Permission } from '../permissions';
import { CreateApiKeyDto, RATE_LIMIT_RULE } from './create-api-key.dto';
import { KeyRateLimitDto } from './key-rate-limit.dto';

/**
 * A PATCH of a key (JSON Merge Patch, RFC 7396, or the same object as plain JSON): what is
 * absent stays as it is, null clears. Validated as on create; only what a change may do
 * differs (permissions only narrow, and null is no set of permissions).
 */
@ApiSchema({ name: 'ApiKeyPatch' })
export class UpdateApiKeyDto extends CreateApiKeyDto {
  @ApiPropertyOptional({
    type: 'string',
    description: 'What the key is for, trimmed (1 to 255 characters). Absent: unchanged; null: no description.',
  })
  declare description?: string | null;

  @ApiPropertyOptional({
    type: [String],
    description:
      "What the key may do from now on: the key's own permissions or fewer (asking for one it does not hold is a 400: " +
      'create a new key for more), and never more than the key making the request holds (else 403 ' +
      '`insufficient-permission`). Absent: unchanged; an empty list or null is a 400.',
  })
  declare permissions?: Permission[];

  @ApiPropertyOptional({
    type: [String],
    description:
      'The networks the key may be used from, as on create. Absent: unchanged; null: any address; an empty list is a 400. ' +
      'Lifting the allowlist, or adding an address it refused, needs every permission the key holds (else 403 ' +
      '`insufficient-permission`).',
  })
  declare allowedCidrs?: string[] | null;

  @ApiPropertyOptional({
    type: 'string',
    description:
      "When the key stops working by itself. Absent: unchanged; null: never. Giving the region's last permanent key " +
      'holding `region:read` and `keys:write` an expiry is refused (`last-api-key`). Lifting or postponing an expiry ' +
      'needs every permission the key holds (else 403 `insufficient-permission`).',
  })
  declare expiresAt?: string | null;

  @ApiPropertyOptional({
    type: KeyRateLimitDto,
    description: `The key's own rate limit from now on. Absent: unchanged. ${RATE_LIMIT_RULE}`,
  })
  declare rateLimit?: KeyRateLimitDto | null;
}
