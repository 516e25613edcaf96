import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { ApiDateTime, ApiUuid } from '../../common/swagger';
import type { Permission } from '../permissions';
import type { ApiKeyRecord } from '../region-keys.repository';
import type { RolledApiKey } from '../region-keys.types';
import { KeyRateLimitDto } from './key-rate-limit.dto';

/** An existing key, as clients see it: never the key itself, never its hash. */
@ApiSchema({ name: 'ApiKey' })
export class ApiKeyDto {
  /** @example 0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11 */
  @ApiUuid()
  id: string;

  /** @example 'Timetable sync (production)' */
  description: string | null;

  /**
   * First 8 characters, an ellipsis, and the last 4 of the key.
   * @example rk_4Fq9Z…sbce
   */
  tokenPreview: string;

  /** @example 2026-11-22T10:15:00.000Z */
  @ApiDateTime()
  createdAt: string;

  /** @example 2026-11-22T10:15:00.000Z */
  @ApiDateTime()
  updatedAt: string;

  /**
   * When the key last authenticated a request (updated at most about once a minute).
   * @example 2026-11-22T11:02:00.000Z
   */
  @ApiDateTime()
  lastUsedAt: string | null;

  /** When the key stops working by itself (set when it is rolled); null: never. */
  // An example of null is one JSDoc cannot give.
  @ApiDateTime({ example: null })
  revokesAt: string | null;

  /** When the key stops working by itself, as set on create, roll or PATCH; null: never. Past it the key is refused (401) and no longer listed. */
  @ApiDateTime({ example: null })
  expiresAt: string | null;

  /**
   * What the key may do: `region:read` (read the region, its keys and events), `keys:write` (create, roll and delete keys).
   * @example ['region:read', 'keys:write']
   */
  permissions: Permission[];

  /** The networks (canonical CIDRs) the key may be used from; null: any address. */
  @ApiProperty({ type: [String], example: null })
  allowedCidrs: string[] | null;

  /** The key's own rate limit; null: the region's default (the operator's REGION_KEY_RATE_LIMIT). */
  rateLimit: KeyRateLimitDto | null;

  /** When a leak of this key was first reported (POST /auth/region/api-keys/leaked) while it was the region's last managing key, which is never revoked: roll it. Null: no such report. */
  @ApiDateTime({ example: null })
  leakReportedAt: string | null;

  static from(key: ApiKeyRecord): ApiKeyDto {
    return {
      id: key.id,
      description: key.description,
      tokenPreview: key.tokenPreview,
      createdAt: key.createdAt.toISOString(),
      updatedAt: key.updatedAt.toISOString(),
      lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
      revokesAt: key.revokesAt?.toISOString() ?? null,
      expiresAt: key.expiresAt?.toISOString() ?? null,
      permissions: key.permissions,
      allowedCidrs: key.allowedCidrs,
      rateLimit: key.rateLimit,
      leakReportedAt: key.leakReportedAt?.toISOString() ?? null,
    };
  }
}

@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyDto extends ApiKeyDto {
  /**
   * The full key. Shown only in this response: store it now, it cannot be retrieved again.
   * @example rk_4Fq9ZkT2mW8bLr1sXyC0vN7pHd3eJg6uQo5iAa9fKtB1Isbce
   */
  key: string;

  static fromIssued(apiKey: ApiKeyRecord, key: string): CreatedApiKeyDto {
    return { ...ApiKeyDto.from(apiKey), key };
  }
}

@ApiSchema({ name: 'ReplacedApiKey' })
export class ReplacedApiKeyDto {
  /**
   * The rolled (old) key.
   * @example 0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11
   */
  @ApiUuid()
  id: string;

  /**
   * When the old key stops working; it authenticates until then.
   * @example 2026-11-23T10:15:00.000Z
   */
  @ApiDateTime()
  revokesAt: string;
}

@ApiSchema({ name: 'RolledApiKey' })
export class RolledApiKeyDto extends CreatedApiKeyDto {
  replaces: ReplacedApiKeyDto;

  static fromRolled({ apiKey, key, replaces }: RolledApiKey): RolledApiKeyDto {
    return {
      ...CreatedApiKeyDto.fromIssued(apiKey, key),
      replaces: { id: replaces.id, revokesAt: replaces.revokesAt.toISOString() },
    };
  }
}
