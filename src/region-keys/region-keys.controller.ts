import { Body, Controller, Delete, Get, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../common/swagger/api-problems.decorator';
import { UuidParam } from '../common/validation/uuid-param';
import { CreatedApiKeyDto } from './dto/api-key.dto';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { RegionDto } from './dto/region.dto';
import { CurrentRegion, RegionKeyAuth } from './region-key-auth.decorator';
import { RegionKeysService, type RegionPrincipal } from './region-keys.service';

@ApiTags('Region API keys')
@RegionKeyAuth()
@Controller('auth')
export class RegionKeysController {
  constructor(private readonly regionKeys: RegionKeysService) {}

  @Get('regions/me')
  @ApiOperation({ summary: 'Get your region', description: 'The region of the API key that authenticates the request, with its active keys (oldest first).' })
  @ApiOkResponse({ type: RegionDto })
  getMyRegion(@CurrentRegion() caller: RegionPrincipal): RegionDto {
    // Read with the key itself, in the query that accepted it (see RegionKeysService.authenticate).
    return RegionDto.from(caller.region);
  }

  @Post('region/api-keys')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Create an API key',
    description:
      'Creates a key for your region. The response is the only time the full key (`key`) is shown. ' +
      'To rotate: create a new key, deploy it, wait until the old key\'s `lastUsedAt` stops moving, then delete the old key.',
  })
  @ApiBody({ type: CreateApiKeyDto, required: false })
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'The new key, with its secret (shown once).' })
  @ApiProblems(400, 413, 415, {
    status: 409,
    slug: 'api-key-limit',
    description: 'The region already holds the maximum number of active keys.',
  })
  async createKey(@CurrentRegion() caller: RegionPrincipal, @Body() body: CreateApiKeyDto = {}): Promise<CreatedApiKeyDto> {
    const { apiKey, key } = await this.regionKeys.createKey(caller.regionId, body.description ?? null);
    return CreatedApiKeyDto.fromIssued(apiKey, key);
  }

  @Delete('region/api-keys/:id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete (revoke) an API key',
    description: 'Revokes a key of your region at once. The last active key of a region cannot be deleted. A key may delete itself.',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The key\'s id (from GET /auth/regions/me).' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiProblems(
    { status: 400, description: 'The id is not a UUID.' },
    { status: 413, description: 'A body was sent, larger than any this API accepts (this request takes no body).' },
    { status: 415, description: 'A body was sent that is not JSON (this request takes no body).' },
    { status: 404, description: 'No active key with this id in your region.' },
    { status: 409, slug: 'last-api-key', description: 'This is the region\'s only active key.' },
  )
  async revokeKey(@CurrentRegion() caller: RegionPrincipal, @UuidParam('id') id: string): Promise<void> {
    await this.regionKeys.revokeKey(caller.regionId, id);
  }
}

