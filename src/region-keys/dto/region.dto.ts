import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import type { RegionWithKeys } from '../region-keys.types';
import { ApiKeyDto } from './api-key.dto';

@ApiSchema({ name: 'Region' })
export class RegionDto {
  @ApiProperty({ format: 'uuid', example: '5d7c2f1a-3b4e-4a6f-8c9d-0e1f2a3b4c5d' })
  id: string;

  @ApiProperty({ example: 'Onderwijsregio Utrecht' })
  name: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-01T08:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-01T08:00:00.000Z' })
  updatedAt: string;

  @ApiProperty({
    type: [ApiKeyDto],
    description: 'Active keys, oldest first. Revoked and expired keys are not listed.',
  })
  apiKeys: ApiKeyDto[];

  static from({ region, apiKeys }: RegionWithKeys): RegionDto {
    return {
      id: region.id,
      name: region.name,
      createdAt: region.createdAt.toISOString(),
      updatedAt: region.updatedAt.toISOString(),
      apiKeys: apiKeys.map(ApiKeyDto.from),
    };
  }
}
