import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import {
  absoluteUrl,
  AcceptsMergePatch,
  type ChangeConditions,
  ConditionalChange,
  ConditionalGet,
  Conditions,
  locationHeader,
  SecretResponse,
  sendTagged,
} from '../common/http';
import { Idempotent } from '../common/idempotency';
import { NOT_FOUND, VALIDATION } from '../common/problem';
import { ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { invalidBody, invalidQuery, notAUuid, UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ApiKeyDto, CreatedApiKeyDto, RolledApiKeyDto } from './dto/api-key.dto';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { RegionDto } from './dto/region.dto';
import { ListRegionEventsQueryDto, RegionEventPageDto } from './dto/region-event.dto';
import { DEFAULT_REVOKE_OLD_AFTER_SECONDS, RollApiKeyDto } from './dto/roll-api-key.dto';
import { UpdateApiKeyDto } from './dto/update-api-key.dto';
import { KEY_TAGS, keyEtag } from './key-etag';
import { KeyUsageDto, KeyUsageQueryDto } from './key-usage/key-usage.dto';
import { KeyUsageService, UsageKeyNotFoundError } from './key-usage/key-usage.service';
import { ChangeOriginOf, CurrentRegion, RegionKeyAuth } from './region-key-auth.decorator';
import { API_KEY_ALREADY_ROLLED, API_KEY_LIMIT, ApiKeyNotFoundError, LAST_API_KEY } from './region-keys.errors';
import { RegionKeysService } from './region-keys.service';
import { type ChangeOrigin, type RegionPrincipal } from './region-keys.types';

/** A key's URI: GET reads it, PATCH changes it, DELETE revokes it, and /usage below it reads its usage. */
const apiKeyPath = (id: string): string => `/auth/region/api-keys/${id}`;
const KEY_LOCATION = locationHeader(
  'The URI of the new key: GET it (with a key holding region:read), PATCH it, or DELETE it to revoke it.',
  '/auth/region/api-keys/3f0c1d2e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
);
const KEY_NOT_FOUND = {
  types: [NOT_FOUND],
  description:
    'No active key with this id in your region: none was made, or it was revoked, has expired or is of another region.',
  examples: [() => new ApiKeyNotFoundError()],
};
const KEY_ID_PARAM = { name: 'id', format: 'uuid', description: "The key's id (from GET /auth/regions/me)." } as const;
/** A body a create or update refuses: a description too long. */
const LONG_DESCRIPTION = { description: 'x'.repeat(300) };

@ApiTags('Region API keys')
@Controller('auth')
export class RegionKeysController {
  constructor(
    private readonly regionKeys: RegionKeysService,
    private readonly keyUsage: KeyUsageService,
    private readonly config: AppConfig,
  ) {}

  @Get('regions/me')
  @RegionKeyAuth('region:read')
  @ApiOperation({
    summary: 'Get your region',
    description: 'The region of the API key that authenticates the request, with its active keys (oldest first).',
  })
  @ApiOkResponse({ type: RegionDto })
  getMyRegion(@CurrentRegion() caller: RegionPrincipal): RegionDto {
    // Read with the key itself, in the query that accepted it (see RegionKeysService.authenticate).
    return RegionDto.from(caller.region);
  }

  @Post('region/api-keys')
  @RegionKeyAuth('keys:write')
  @SecretResponse()
  @Idempotent({ scope: 'caller' })
  @ApiOperation({
    summary: 'Create an API key',
    description:
      'Creates a key for your region. The response is the only time the full key (`key`) is shown. ' +
      'The new key holds the permissions asked for (by default those of the key making the request; never more) and may ' +
      'be limited to `allowedCidrs` (by default any address). ' +
      'To rotate a key, roll it instead (POST /auth/region/api-keys/{id}/roll).',
  })
  @ApiBody({ type: CreateApiKeyDto, required: false })
  @ApiCreatedResponse({
    type: CreatedApiKeyDto,
    description: 'The new key, with its secret (shown once).',
    headers: KEY_LOCATION,
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid or unknown fields: an empty or unknown permission, an invalid CIDR.',
      invalidBody(CreateApiKeyDto, LONG_DESCRIPTION),
    ),
    { types: [API_KEY_LIMIT], description: 'The region already holds the maximum number of active keys.' },
  )
  async createApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: CreateApiKeyDto = {},
  ): Promise<CreatedApiKeyDto> {
    const { apiKey, key } = await this.regionKeys.createKey(caller.regionId, body, origin, caller.permissions);
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, apiKeyPath(apiKey.id)));
    return CreatedApiKeyDto.fromIssued(apiKey, key);
  }

  @Get('region/api-keys/:id')
  @RegionKeyAuth('region:read')
  @ApiOperation({
    summary: 'Get an API key',
    description:
      'One active key of your region, as GET /auth/regions/me lists it, with its ETag. Revoked and expired keys, and ' +
      'keys of other regions, are 404. The ETag leaves out `lastUsedAt` (see the header), so a 304 to If-None-Match ' +
      'says the key is as you hold it but for when it was last used.',
  })
  @ApiParam(KEY_ID_PARAM)
  @ConditionalGet(KEY_TAGS)
  @ApiOkResponse({ type: ApiKeyDto, description: 'The key.' })
  @ApiProblems(
    { types: [VALIDATION], description: 'The id is not a UUID.', examples: [() => notAUuid('id')] },
    KEY_NOT_FOUND,
  )
  async getApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const key = this.regionKeys.findKey(caller, id);
    await sendTagged(reply, keyEtag(key), ApiKeyDto.from(key));
  }

  @Patch('region/api-keys/:id')
  @AcceptsMergePatch()
  @RegionKeyAuth('keys:write')
  @ApiOperation({
    summary: 'Update an API key',
    description:
      'Changes a key of your region: its `description`, its `permissions` (only fewer: for more, create a new key), ' +
      'its `allowedCidrs` and its `expiresAt`. A JSON Merge Patch (RFC 7396, `application/merge-patch+json`) or the ' +
      'same object as `application/json`: fields left out stay as they are, null clears. Never more than the key ' +
      'making the request holds (else 403 `insufficient-permission`). A region keeps at least one key that holds ' +
      '`keys:write`, can be used from some address, and neither expires nor is scheduled to stop: a change that would ' +
      'leave none is refused (`last-api-key`). With If-Match, the change is made only while the key still has that ' +
      'ETag (else 412). A change is recorded as one `api_key.updated` event; a patch that changes nothing answers ' +
      'the key as it is, and records nothing.',
  })
  @ApiParam(KEY_ID_PARAM)
  @ConditionalChange(KEY_TAGS)
  @ApiConsumes('application/merge-patch+json', 'application/json')
  @ApiBody({ type: UpdateApiKeyDto, required: false })
  @ApiOkResponse({ type: ApiKeyDto, description: 'The key as it is now, with its new ETag.' })
  @ApiProblems(
    ...jsonBodyProblems(
      'The id is not a UUID, or the body has invalid or unknown fields: a permission the key does not hold ' +
        '(`permissions` only narrow), an empty list, an invalid CIDR, an `expiresAt` less than a minute or more than ' +
        'the allowed days ahead.',
      invalidBody(UpdateApiKeyDto, LONG_DESCRIPTION),
    ),
    KEY_NOT_FOUND,
    {
      types: [LAST_API_KEY],
      description:
        'The change would leave the region without a permanent key that holds keys:write (this key is the only one, and ' +
        'would lose keys:write, get an allowlist no address passes, or get an expiry).',
    },
  )
  async updateApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
    @Conditions() conditions: ChangeConditions,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: UpdateApiKeyDto = {},
  ): Promise<ApiKeyDto> {
    const key = await this.regionKeys.updateKey(caller.regionId, id, body, conditions, origin, caller.permissions);
    reply.header('ETag', keyEtag(key));
    return ApiKeyDto.from(key);
  }

  @Delete('region/api-keys/:id')
  @RegionKeyAuth('keys:write')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete (revoke) an API key',
    description:
      'Revokes a key of your region at once. A region keeps at least one key that holds `keys:write`, can be used ' +
      'from some address, and neither expires nor is scheduled for revocation: deleting the last such key is ' +
      'refused. A key may delete itself.',
  })
  @ApiParam(KEY_ID_PARAM)
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiProblems(...unexpectedBodyProblems('The id is not a UUID.', () => notAUuid('id')), KEY_NOT_FOUND, {
    types: [LAST_API_KEY],
    description:
      "This is the region's only key that holds keys:write and neither expires nor is scheduled for revocation (the " +
      'others, if any, are about to stop or cannot manage keys).',
  })
  async revokeApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
  ): Promise<void> {
    await this.regionKeys.revokeKey(caller.regionId, id, origin);
  }

  @Post('region/api-keys/:id/roll')
  @RegionKeyAuth('keys:write')
  @SecretResponse()
  @Idempotent({ scope: 'caller' })
  @ApiOperation({
    summary: 'Roll an API key',
    description:
      'The recommended way to rotate a key: creates a new key (its full `key` is shown only in this response) and ' +
      'schedules the old key to stop after `revokeOldAfterSeconds` (a day by default; 0 revokes it at once). ' +
      'Until then both keys work, so the new key can be deployed without downtime. The new key keeps the old ' +
      "key's description, `permissions` and `allowedCidrs` unless others are given (null: any address), so a roll " +
      'never widens a key; it never holds more than the key making the request (else 403 `insufficient-permission`). ' +
      "The region's key limit counts the new key. Rolling the region's last permanent key holding `keys:write` into " +
      "a key without it, or into one that expires, is refused (`last-api-key`). The new key keeps the old key's " +
      '`expiresAt` unless another is given.',
  })
  @ApiParam({ ...KEY_ID_PARAM, description: 'The id of the key to replace (from GET /auth/regions/me).' })
  @ApiBody({ type: RollApiKeyDto, required: false })
  @ApiCreatedResponse({
    type: RolledApiKeyDto,
    description: 'The new key, with its secret (shown once), and when the old key stops.',
    headers: KEY_LOCATION,
  })
  @ApiProblems(
    ...jsonBodyProblems(
      'The id is not a UUID, or the body has invalid or unknown fields (an empty permission list, an invalid CIDR).',
      invalidBody(RollApiKeyDto, { revokeOldAfterSeconds: -1 }),
    ),
    KEY_NOT_FOUND,
    {
      types: [API_KEY_ALREADY_ROLLED, API_KEY_LIMIT, LAST_API_KEY],
      description:
        'The key was already rolled (`api-key-already-rolled`: it is scheduled to stop; roll its replacement instead), or the ' +
        'region already holds the maximum number of active keys (`api-key-limit`), or the new key would leave the region ' +
        'without a permanent key holding keys:write (`last-api-key`).',
    },
  )
  async rollApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: RollApiKeyDto = {},
  ): Promise<RolledApiKeyDto> {
    const revokeOldAfterSeconds = body.revokeOldAfterSeconds ?? DEFAULT_REVOKE_OLD_AFTER_SECONDS;
    const options = { ...body, revokeOldAfterSeconds };
    const rolled = await this.regionKeys.rollKey(caller.regionId, id, options, origin, caller.permissions);
    const created = RolledApiKeyDto.fromRolled(rolled);
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, apiKeyPath(created.id)));
    return created;
  }

  @Get('region/api-keys/:id/usage')
  @RegionKeyAuth('region:read')
  @ApiOperation({
    summary: "Get an API key's usage",
    description:
      'The requests the key authenticated on each of the last `days` UTC days (today included), oldest first. ' +
      'Every day of the window is listed, days without requests as 0, so the answer can be plotted as it is. ' +
      'Usage is kept 90 days, and revoked keys of your region still answer. Each server instance counts in memory ' +
      'and writes its counts at most once a minute, so the latest minute may be missing: the instance that answers ' +
      "adds what it has not written yet, the others' show after their next write. After rolling a key, watch the " +
      "old key's usage go to 0 before deleting it.",
  })
  @ApiParam(KEY_ID_PARAM)
  @ApiOkResponse({ type: KeyUsageDto })
  @ApiProblems(
    {
      types: [VALIDATION],
      description: 'The id is not a UUID, or `days` is not a whole number from 1 to 90.',
      examples: [invalidQuery(KeyUsageQueryDto, { days: '0' })],
    },
    {
      types: [NOT_FOUND],
      description: 'No key with this id in your region (revoked keys included).',
      examples: [() => new UsageKeyNotFoundError()],
    },
  )
  async getApiKeyUsage(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
    @Query() query: KeyUsageQueryDto,
  ): Promise<KeyUsageDto> {
    return KeyUsageDto.from(await this.keyUsage.dailyUsage(caller.regionId, id, query.days));
  }

  @Get('region/events')
  @RegionKeyAuth('region:read')
  @ApiOperation({
    summary: "List your region's events",
    description:
      'The audit trail of your region: who created, rolled and revoked which key, when, from which client address ' +
      'and in which request. Newest first; follow `meta.next` for older events (a cursor, stable while new events ' +
      'are added). Failed requests are not recorded.',
  })
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
