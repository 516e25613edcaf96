import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { ConditionalGet, MalformedConditionError, sendTagged } from '../common/http';
import { VALIDATION } from '../common/problem';
import { ApiProblems } from '../common/swagger';
import { ApiKeyDto } from './dto/api-key.dto';
import { KEY_TAGS, keyEtag } from './key-etag';
import { CurrentRegion, RegionKeyAuth } from './region-key-auth.decorator';
import { RegionKeysService } from './region-keys.service';
import type { RegionPrincipal } from './region-keys.types';

/** The key making the request: /auth/region/api-keys/current. */
@ApiTags('Region API keys')
@Controller('auth')
export class CurrentKeyController {
  constructor(private readonly regionKeys: RegionKeysService) {}

  /**
   * Get the API key making the request
   * @remarks The key in X-API-Key, as GET /auth/region/api-keys/{id} answers it, with its ETag; any valid key may ask,
   * whatever its permissions. After deploying a new key, this says which key a deployment really sends.
   */
  @Get('region/api-keys/current')
  @RegionKeyAuth('any')
  @ConditionalGet(KEY_TAGS)
  @ApiOkResponse({ type: ApiKeyDto, description: 'The key making the request.' })
  @ApiProblems({
    types: [VALIDATION],
    description: 'A malformed If-None-Match or If-Match.',
    examples: [() => new MalformedConditionError('If-None-Match')],
  })
  async getCurrentApiKey(@CurrentRegion() caller: RegionPrincipal, @Res() reply: FastifyReply): Promise<void> {
    const key = this.regionKeys.findKey(caller, caller.apiKeyId);
    await sendTagged(reply, keyEtag(key), ApiKeyDto.from(key));
  }
}
