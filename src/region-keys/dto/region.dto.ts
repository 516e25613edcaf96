import { ApiSchema } from '@nestjs/swagger';

import { ApiDateTime, ApiUuid } from '../../common/swagger';
import type { RegionWithKeys } from '../region-keys.types';
import { ApiKeyDto } from './api-key.dto';

@ApiSchema({ name: 'Region' })
export class RegionDto {
  /** @example 5d7c2f1a-3b4e-4a6f-8c9d-0e1f2a3b4c5d */
  @ApiUuid()
  id: string;

  /** @example 'Onderwijsregio Utrecht' */
  name: string;

  /** @example 2026-11-01T08:00:00.000Z */
  @ApiDateTime()
  createdAt: string;

  /** @example 2026-11-01T08:00:00.000Z */
  @ApiDateTime()
  updatedAt: string;

  /** Active keys, oldest first. Revoked and expired keys are not listed. */
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
