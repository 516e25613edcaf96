import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { type Permission, PERMISSIONS } from '../permissions';
import type { ApiKeyRecord } from '../region-keys.repository';
import type { RolledApiKey } from '../region-keys.types';

/** An existing key, as clients see it: never the key itself, never its hash. */
@ApiSchema({ name: 'ApiKey' })
export class ApiKeyDto {
  @ApiProperty({ format: 'uuid', example: '0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11' })
  id: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'Timetable sync (production)' })
  description: string | null;

  @ApiProperty({
    description: 'First 8 characters, an ellipsis, and the last 4 of the key.',
    example: 'rk_4Fq9Z\u2026x7Qa',
  })
  tokenPreview: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:15:00.000Z' })
  updatedAt: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When the key last authenticated a request (updated at most about once a minute).',
    example: '2026-11-22T11:02:00.000Z',
  })
  lastUsedAt: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When the key stops working by itself (set when it is rolled); null: never.',
    example: null,
  })
  revokesAt: string | null;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'When the key stops working by itself, as set on create, roll or PATCH; null: never. Past it the key is ' +
      'refused (401) and no longer listed.',
    example: null,
  })
  expiresAt: string | null;

  @ApiProperty({
    type: [String],
    enum: PERMISSIONS,
    description:
      'What the key may do: `region:read` (read the region, its keys and events), `keys:write` (create, roll and delete keys).',
    example: ['region:read', 'keys:write'],
  })
  permissions: Permission[];

  @ApiProperty({
    type: [String],
    nullable: true,
    description: 'The networks (canonical CIDRs) the key may be used from; null: any address.',
    example: null,
  })
  allowedCidrs: string[] | null;

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
    };
  }
}

@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({
    description: 'The full key. Shown only in this response: store it now, it cannot be retrieved again.',
    example: 'rk_4Fq9ZkT2mW8bLr1sXyC0vN7pHd3eJg6uQo5iAa9fKtBzE2x7Qa',
  })
  key: string;

  static fromIssued(apiKey: ApiKeyRecord, key: string): CreatedApiKeyDto {
    return { ...ApiKeyDto.from(apiKey), key };
  }
}

@ApiSchema({ name: 'ReplacedApiKey' })
export class ReplacedApiKeyDto {
  @ApiProperty({
    format: 'uuid',
    description: 'The rolled (old) key.',
    example: '0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11',
  })
  id: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When the old key stops working; it authenticates until then.',
    example: '2026-11-23T10:15:00.000Z',
  })
  revokesAt: string;
}

@ApiSchema({ name: 'RolledApiKey' })
export class RolledApiKeyDto extends CreatedApiKeyDto {
  @ApiProperty({ type: () => ReplacedApiKeyDto })
  replaces: ReplacedApiKeyDto;

  static fromRolled({ apiKey, key, replaces }: RolledApiKey): RolledApiKeyDto {
    return {
      ...CreatedApiKeyDto.fromIssued(apiKey, key),
      replaces: { id: replaces.id, revokesAt: replaces.revokesAt.toISOString() },
    };
  }
}
