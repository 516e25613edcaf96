import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Res } from '@nestjs/common';
import { ApiConsumes, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import {
  absoluteUrl,
  AcceptsMergePatch,
  type ChangeConditions,
  ConditionalChange,
  ConditionalGet,
  Conditions,
  SecretResponse,
  sendTagged,
} from '../common/http';
import { Idempotent } from '../common/idempotency';
import { ApiOptionalBody, ApiProblems, jsonBodyProblems, unexpectedBodyProblems } from '../common/swagger';
import { invalidBody, notAUuid, UuidParam } from '../common/validation';
import { AppConfig } from '../config';
import { ApiKeyDto, CreatedApiKeyDto, RolledApiKeyDto } from './dto/api-key.dto';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { RegionDto } from './dto/region.dto';
import { DEFAULT_REVOKE_OLD_AFTER_SECONDS, RollApiKeyDto } from './dto/roll-api-key.dto';
import { UpdateApiKeyDto } from './dto/update-api-key.dto';
import { KEY_TAGS, keyEtag } from './key-etag';
import { ApiKeyCreated, ApiKeyId, apiKeyPath } from './key-id.param';
import { ChangeOriginOf, CurrentRegion, RegionKeyAuth } from './region-key-auth.decorator';
import { API_KEY_ALREADY_ROLLED, API_KEY_LIMIT, LAST_API_KEY } from './region-keys.errors';
import { RegionKeysService } from './region-keys.service';
import { type ChangeOrigin, type RegionPrincipal } from './region-keys.types';

/** A change refused because the region would be left without a key to manage its keys. */
const LAST_KEY = {
  types: [LAST_API_KEY],
  description:
    'The region would be left without a permanent key: one that holds region:read and keys:write, can be used from ' +
    'some address, and neither expires nor is scheduled to stop.',
};
/** A body a create or update refuses: a description too long. */
const LONG_DESCRIPTION = { description: 'x'.repeat(300) };
/** What "Try it out" creates: a key with no allowlist and no expiry, of use wherever the reader is. */
const READ_ONLY_KEY = { description: 'Timetable sync (production)', permissions: ['region:read'] };

@ApiTags('Region API keys')
@Controller('auth')
export class RegionKeysController {
  constructor(
    private readonly regionKeys: RegionKeysService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Get your region
   * @remarks The region of the API key that authenticates the request, with its active keys (oldest first).
   */
  @Get('regions/me')
  @RegionKeyAuth('region:read')
  @ApiOkResponse({ type: RegionDto })
  getMyRegion(@CurrentRegion() caller: RegionPrincipal): RegionDto {
    // Read with the key itself, in the query that accepted it (see RegionKeysService.authenticate).
    return RegionDto.from(caller.region);
  }

  /**
   * Create an API key
   * @remarks Creates a key for your region. The response is the only time the full key (`key`) is shown. The new key
   * holds the permissions asked for (by default those of the key making the request; never more) and may be limited to
   * `allowedCidrs` (by default any address). To rotate a key, roll it instead (POST /auth/region/api-keys/{id}/roll).
   */
  @Post('region/api-keys')
  @RegionKeyAuth('keys:write', { grants: true })
  @SecretResponse()
  @Idempotent({ scope: 'caller' })
  @ApiOptionalBody(CreateApiKeyDto, 'A read-only key, usable from any address', READ_ONLY_KEY)
  @ApiKeyCreated(CreatedApiKeyDto, 'The new key, with its secret (shown once).')
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
    const { apiKey, key } = await this.regionKeys.createKey(caller.regionId, body, origin, caller);
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, apiKeyPath(apiKey.id)));
    return CreatedApiKeyDto.fromIssued(apiKey, key);
  }

  /**
   * Get an API key
   * @remarks One active key of your region, as GET /auth/regions/me lists it, with its ETag. Revoked and expired keys,
   * and keys of other regions, are 404. The ETag leaves out `lastUsedAt` (see the header), so a 304 to If-None-Match
   * says the key is as you hold it but for when it was last used.
   */
  @Get('region/api-keys/:id')
  @RegionKeyAuth('region:read')
  @ApiKeyId()
  @ConditionalGet(KEY_TAGS)
  @ApiOkResponse({ type: ApiKeyDto, description: 'The key.' })
  async getApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @UuidParam('id') id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const key = this.regionKeys.findKey(caller, id);
    await sendTagged(reply, keyEtag(key), ApiKeyDto.from(key));
  }

  /**
   * Update an API key
   * @remarks Changes a key of your region: its `description`, its `permissions` (only fewer: for more, create a new
   * key), its `allowedCidrs` and its `expiresAt`. A JSON Merge Patch (RFC 7396, `application/merge-patch+json`) or the
   * same object as `application/json`: fields left out stay as they are, null clears. Never more than the key making
   * the request holds (else 403 `insufficient-permission`): lifting or widening a key's allowlist, or lifting or
   * postponing its expiry, needs every permission the key keeps, as rolling it does. A change that would leave the
   * region without a permanent key holding both permissions is refused (`last-api-key`). With If-Match, the change is
   * made only while the key still has that ETag (else 412). A change is recorded as one `api_key.updated` event; a
   * patch that changes nothing answers the key as it is, and records nothing.
   */
  @Patch('region/api-keys/:id')
  @AcceptsMergePatch()
  @RegionKeyAuth('keys:write', { grants: true })
  @ApiKeyId()
  @ConditionalChange(KEY_TAGS)
  @ApiConsumes('application/merge-patch+json', 'application/json')
  @ApiOptionalBody(UpdateApiKeyDto, 'A new description', { description: 'Timetable sync (staging)' })
  @ApiOkResponse({ type: ApiKeyDto, description: 'The key as it is now, with its new ETag.' })
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid or unknown fields: a permission the key does not hold (`permissions` only narrow), an empty list, ' +
        'an invalid CIDR, an `expiresAt` less than a minute or more than the allowed days ahead.',
      invalidBody(UpdateApiKeyDto, LONG_DESCRIPTION),
      { mergePatch: true },
    ),
    LAST_KEY,
  )
  async updateApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
    @Conditions() conditions: ChangeConditions,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: UpdateApiKeyDto = {},
  ): Promise<ApiKeyDto> {
    const key = await this.regionKeys.updateKey(caller.regionId, id, body, conditions, origin, caller);
    reply.header('ETag', keyEtag(key));
    return ApiKeyDto.from(key);
  }

  /**
   * Delete (revoke) an API key
   * @remarks Revokes a key of your region at once; a key may delete itself. Deleting the region's last permanent key
   * holding both permissions is refused (`last-api-key`).
   */
  @Delete('region/api-keys/:id')
  @RegionKeyAuth('keys:write')
  @HttpCode(204)
  @ApiKeyId()
  @ConditionalChange(KEY_TAGS)
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiProblems(...unexpectedBodyProblems(() => notAUuid('id')), LAST_KEY)
  async revokeApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
    @Conditions() conditions: ChangeConditions,
  ): Promise<void> {
    await this.regionKeys.revokeKey(caller.regionId, id, origin, conditions);
  }

  /**
   * Roll an API key
   * @remarks The recommended way to rotate a key: creates a new key (its full `key` is shown only in this response) and
   * schedules the old key to stop after `revokeOldAfterSeconds` (a day by default; 0 revokes it at once). Until then
   * both keys work, so the new key can be deployed without downtime. A key rolling itself keeps working for at least
   * 60 seconds (less is a 400), so that a retry of the roll, with the same Idempotency-Key, is still answered; to stop
   * it sooner, DELETE it with the new key. The new key keeps the old key's description, `permissions`, `allowedCidrs`
   * and `expiresAt` unless others are given (null: any address, never), so a roll that names none never widens a key;
   * it never holds more than the key making the request (else 403 `insufficient-permission`). The region's key limit
   * counts the new key. Rolling the region's last permanent key holding `region:read` and `keys:write` into a key
   * without one of them, or into one that expires, is refused (`last-api-key`).
   */
  @Post('region/api-keys/:id/roll')
  @RegionKeyAuth('keys:write', { grants: true })
  @SecretResponse()
  @Idempotent({ scope: 'caller' })
  @ApiKeyId({ description: 'The id of the key to replace (from GET /auth/regions/me).' })
  @ApiOptionalBody(RollApiKeyDto, 'The old key stops in an hour', { revokeOldAfterSeconds: 3600 })
  @ApiKeyCreated(RolledApiKeyDto, 'The new key, with its secret (shown once), and when the old key stops.')
  @ApiProblems(
    ...jsonBodyProblems(
      'Invalid or unknown fields: an empty permission list, an invalid CIDR.',
      invalidBody(RollApiKeyDto, { revokeOldAfterSeconds: -1 }),
    ),
    {
      types: [API_KEY_ALREADY_ROLLED, API_KEY_LIMIT, LAST_API_KEY],
      description:
        'The key was already rolled (`api-key-already-rolled`: it is scheduled to stop; roll its replacement instead), or the ' +
        'region already holds the maximum number of active keys (`api-key-limit`), or the new key would leave the region ' +
        'without a permanent key holding region:read and keys:write (`last-api-key`).',
    },
  )
  async rollApiKey(
    @CurrentRegion() caller: RegionPrincipal,
    @ChangeOriginOf() origin: ChangeOrigin,
    @UuidParam('id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: RollApiKeyDto = {},
  ): Promise<RolledApiKeyDto> {
    const options = { ...body, revokeOldAfterSeconds: body.revokeOldAfterSeconds ?? DEFAULT_REVOKE_OLD_AFTER_SECONDS };
    const rolled = await this.regionKeys.rollKey(caller.regionId, id, options, origin, caller);
    const created = RolledApiKeyDto.fromRolled(rolled);
    reply.header('Location', absoluteUrl(reply.request, this.config.ownBaseUrl, apiKeyPath(created.id)));
    return created;
  }
}
