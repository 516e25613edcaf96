import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';

import { NOT_FOUND, VALIDATION } from '../../common/problem';
import { ApiProblems } from '../../common/swagger';
import { invalidQuery, UuidParam } from '../../common/validation';
import { ApiKeyId } from '../key-id.param';
import { CurrentRegion, RegionKeyAuth } from '../region-key-auth.decorator';
import type { RegionPrincipal } from '../region-keys.types';
import { KeyUsageDto, KeyUsageQueryDto } from './key-usage.dto';
import { KeyUsageService, UsageKeyNotFoundError } from './key-usage.service';

/** An API key's daily usage: /auth/region/api-keys/{id}/usage. */
@ApiTags('Region API keys')
@Controller('auth')
export class KeyUsageController {
  constructor(private readonly keyUsage: KeyUsageService) {}

  /**
   * Get an API key's usage
   * @remarks The requests the key authenticated on each of the last `days` UTC days (today included), oldest first.
   * Every day of the window is listed, days without requests as 0, so the answer can be plotted as it is. Usage is kept
   * 90 days, and revoked keys of your region still answer. Each server instance counts in memory and writes its counts
   * at most once a minute, so the latest minute may be missing: the instance that answers adds what it has not written
   * yet, the others' show after their next write. After rolling a key, watch the old key's usage go to 0 before
   * deleting it.
   */
  @Get('region/api-keys/:id/usage')
  @RegionKeyAuth('region:read')
  @ApiKeyId({
    notFound: {
      types: [NOT_FOUND],
      description: 'No key with this id in your region (revoked keys included).',
      examples: [() => new UsageKeyNotFoundError()],
    },
  })
  @ApiOkResponse({ type: KeyUsageDto })
  @ApiProblems({
    types: [VALIDATION],
    description: '`days` is not a whole number from 1 to 90.',
    examples: [invalidQuery(KeyUsageQueryDto, { days: '0' })],
  })
  async getApiKeyUsage(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
    @Query() query: KeyUsageQueryDto,
  ): Promise<KeyUsageDto> {
    return KeyUsageDto.from(await this.keyUsage.dailyUsage(caller.regionId, id, query.days));
  }
}
