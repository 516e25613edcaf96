import { Controller, Get, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';

import { NOT_FOUND, VALIDATION } from '../../common/problem';
import { ApiProblems, type ProblemResponse } from '../../common/swagger';
import { invalidQuery, UuidParam } from '../../common/validation';
import { ApiKeyId } from '../key-id.param';
import { CurrentRegion, RegionKeyAuth } from '../region-key-auth.decorator';
import type { RegionPrincipal } from '../region-keys.types';
import { DEFAULT_USAGE_DAYS, KeyClientsDto, KeyHourlyUsageDto, KeyUsageDto, KeyUsageQueryDto } from './key-usage.dto';
import { daysWithHours, KeyUsageService, UsageKeyNotFoundError } from './key-usage.service';

/** Any key of the region, revoked ones included: what they did is what a rotation checks. */
const USAGE_KEY_NOT_FOUND: ProblemResponse = {
  types: [NOT_FOUND],
  description: 'No key with this id in your region (revoked keys included).',
  examples: [() => new UsageKeyNotFoundError()],
};

/** What one key's requests were and where they came from: /auth/region/api-keys/{id}/usage and /clients. */
@ApiTags('Region API keys')
@Controller('auth')
@ApiExtraModels(KeyUsageDto, KeyHourlyUsageDto)
export class KeyUsageController {
  constructor(private readonly keyUsage: KeyUsageService) {}

  /**
   * Get an API key's usage
   * @remarks The requests the key authenticated on each of the last `days` UTC days (today included), oldest first, or
   * with `granularity=hour` in each of the last 168 UTC hours (the current one last). Every day or hour of the window is
   * listed, quiet ones as 0, so the answer can be plotted as it is. Daily usage is kept 90 days, hourly a week, and
   * revoked keys of your region still answer. Each server instance counts in memory and writes its counts at most once
   * a minute, so the latest minute may be missing: the instance that answers adds what it has not written yet, the
   * others' show after their next write. After rolling a key, watch the old key's hourly usage stop growing before
   * deleting it.
   */
  @Get('region/api-keys/:id/usage')
  @RegionKeyAuth('region:read')
  @ApiKeyId({ notFound: USAGE_KEY_NOT_FOUND })
  @ApiOkResponse({
    description: 'A `KeyUsage` (by day, the default) or, with `granularity=hour`, a `KeyHourlyUsage`.',
    schema: { oneOf: [{ $ref: getSchemaPath(KeyUsageDto) }, { $ref: getSchemaPath(KeyHourlyUsageDto) }] },
  })
  @ApiProblems({
    types: [VALIDATION],
    description:
      '`days` is not a whole number from 1 to 90, `granularity` is neither `day` nor `hour`, or `days` is sent with ' +
      '`granularity=hour`.',
    examples: [invalidQuery(KeyUsageQueryDto, { days: '0' })],
  })
  async getApiKeyUsage(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
    @Query() query: KeyUsageQueryDto,
  ): Promise<KeyUsageDto | KeyHourlyUsageDto> {
    if (query.granularity === 'hour') {
      if (query.days !== undefined) throw daysWithHours();
      return KeyHourlyUsageDto.from(await this.keyUsage.hourlyUsage(caller.regionId, id));
    }
    const days = query.days ?? DEFAULT_USAGE_DAYS;
    return KeyUsageDto.from(await this.keyUsage.dailyUsage(caller.regionId, id, days));
  }

  /**
   * List an API key's clients
   * @remarks The distinct client address and user agent pairs that used the key in the last 30 days, most recent first,
   * at most 100 (a region's own integrations, not a log of everyone), with their first and latest request and how many
   * they made. Revoked keys of your region still answer. Counted in memory and written with the usage, so the latest
   * minute of other instances may be missing.
   */
  @Get('region/api-keys/:id/clients')
  @RegionKeyAuth('region:read')
  @ApiKeyId({ notFound: USAGE_KEY_NOT_FOUND })
  @ApiOkResponse({ type: KeyClientsDto, description: 'The clients, most recent first.' })
  async listApiKeyClients(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
  ): Promise<KeyClientsDto> {
    return KeyClientsDto.from(await this.keyUsage.clients(caller.regionId, id));
  }
}
