import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';

import { VALIDATION } from '../common/problem';
import { ApiProblems } from '../common/swagger';
import { invalidQuery } from '../common/validation';
import { ListRegionEventsQueryDto, RegionEventPageDto } from './dto/region-event.dto';
import { CurrentRegion, RegionKeyAuth } from './region-key-auth.decorator';
import { RegionKeysService } from './region-keys.service';
import type { RegionPrincipal } from './region-keys.types';

/** The audit trail of a region: /auth/region/events. */
@ApiTags('Region API keys')
@Controller('auth')
export class RegionEventsController {
  constructor(private readonly regionKeys: RegionKeysService) {}

  /**
   * List your region's events
   * @remarks The audit trail of your region: who created, rolled and revoked which key, when, from which client address
   * and in which request. Newest first; follow `meta.next` for older events (a cursor, stable while new events are
   * added). Failed requests are not recorded.
   */
  @Get('region/events')
  @RegionKeyAuth('region:read')
  @ApiOkResponse({ type: RegionEventPageDto })
  @ApiProblems({
    types: [VALIDATION],
    description: 'A bad limit, or a cursor that is not a `meta.next` of this listing.',
    examples: [invalidQuery(ListRegionEventsQueryDto, { limit: '0' })],
  })
  async listRegionEvents(
    @CurrentRegion() caller: RegionPrincipal,
    @Query() query: ListRegionEventsQueryDto,
  ): Promise<RegionEventPageDto> {
    const page = await this.regionKeys.listEvents(caller.regionId, query.limit, query.cursor);
    return RegionEventPageDto.from(page, query.limit);
  }
}
