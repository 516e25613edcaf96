import { ApiExtraModels, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

import { PageLimit } from '../../common/paging';
import { ApiDateTime, ApiInteger, ApiUuid } from '../../common/swagger';
import { PERMISSIONS } from '../permissions';
import type { RegionEventRecord, RegionEventType } from '../region-events.repository';
import type { RegionEventPage } from '../region-keys.types';
import { KeyRateLimitDto } from './key-rate-limit.dto';

export const DEFAULT_EVENT_PAGE_SIZE = 20;
export const MAX_EVENT_PAGE_SIZE = 100;

export class ListRegionEventsQueryDto {
  @PageLimit({
    default: DEFAULT_EVENT_PAGE_SIZE,
    max: MAX_EVENT_PAGE_SIZE,
    description: 'The number of events to return.',
  })
  limit: number = DEFAULT_EVENT_PAGE_SIZE;

  /** Where to continue: `meta.next` of a previous page of your region, as given. Absent: the newest events. Any other value is a 400. */
  // No example: Swagger UI's "Try it out" would send it, and list from a made-up position.
  // The pattern the plugin would copy from @Matches holds the length too; the document says
  // it as maxLength.
  @ApiProperty({ maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,200}$/, { message: 'cursor must be the meta.next value of a previous page' })
  cursor?: string;
}

@ApiSchema({ name: 'ApiKeyActor', description: 'A change made with a region API key.' })
export class ApiKeyActorDto {
  /** @example api_key */
  type: 'api_key';

  /**
   * The key that made the change.
   * @example 0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11
   */
  @ApiUuid()
  apiKeyId: string;

  /** @example rk_4Fq9Z…sbce */
  tokenPreview: string;
}

@ApiSchema({
  name: 'OperatorActor',
  description: 'A change made by an operator: the CLI, or the server at its first start.',
})
export class OperatorActorDto {
  /** @example operator */
  type: 'operator';
}

@ApiSchema({ name: 'RegionEventReplacedBy', description: 'The key that replaces a rolled key.' })
export class RegionEventReplacedByDto {
  /** @example 7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f */
  @ApiUuid()
  id: string;

  /** @example rk_8Hm2P…Qz3W */
  tokenPreview: string;
}

@ApiSchema({ name: 'RegionEventReplaces', description: 'The key a new key replaces (the one rolled).' })
export class RegionEventReplacesDto {
  /** @example 0b8f5f0e-6a51-4c39-9d3c-4f5c1e0f2a11 */
  @ApiUuid()
  id: string;
}

@ApiSchema({
  name: 'ReporterActor',
  description:
    'Someone who reported the key as leaked (POST /auth/region/api-keys/leaked), without credentials: `clientAddress` is theirs.',
})
export class ReporterActorDto {
  /** @example reporter */
  type: 'reporter';
}

@ApiSchema({ name: 'RegionEventApiKey' })
export class RegionEventApiKeyDto {
  /** @example 7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f */
  @ApiUuid()
  id: string;

  /** @example rk_8Hm2P…Qz3W */
  tokenPreview: string;

  /**
   * Only on `api_key.rolled`: when the rolled key stops working.
   * @example 2026-11-23T10:15:00.000Z
   */
  @ApiDateTime()
  revokesAt?: string;

  /**
   * On `region.created`, `api_key.created`, `api_key.rolled` and `api_key.updated`, when the key has an expiry: when it stops working by itself (after the change, for `api_key.updated`). Absent: it never expires.
   * @example 2027-03-01T00:00:00.000Z
   */
  @ApiDateTime()
  expiresAt?: string;

  /**
   * On `region.created`, `api_key.created` and `api_key.rolled`: the permissions of the key (for a new key, what was granted). Absent on other events, and on events recorded before keys had permissions.
   * @example ['region:read']
   */
  // As recorded: an event keeps the permissions of its time.
  @ApiProperty({ type: [String], enum: PERMISSIONS })
  permissions?: string[];

  /**
   * With `permissions`: the networks the key may be used from; null: any address.
   * @example ['203.0.113.0/24']
   */
  allowedCidrs?: string[] | null;

  /**
   * With `permissions`, on events recorded since it is: the key's own rate limit; null: the region's default (it follows the default as it changes). Absent where not recorded.
   */
  rateLimit?: KeyRateLimitDto | null;

  /** Only on `api_key.rolled` (of rolls recorded since events link keys): the key that replaces this one. */
  replacedBy?: RegionEventReplacedByDto;

  /** Only on the `api_key.created` of a roll (since events link keys): the key this one replaces. */
  replaces?: RegionEventReplacesDto;
}

@ApiSchema({
  name: 'ApiKeyChanges',
  description:
    'What an `api_key.updated` set: each field the change set, with its new value (null: cleared). Fields it left as ' +
    'they were are absent.',
})
export class ApiKeyChangesDto {
  /** @example 'Nightly export' */
  description?: string | null;

  /** @example ['region:read'] */
  @ApiProperty({ type: [String], enum: PERMISSIONS })
  permissions?: string[];

  /** @example ['203.0.113.0/24'] */
  allowedCidrs?: string[] | null;

  /** @example 2027-03-01T00:00:00.000Z */
  @ApiDateTime()
  expiresAt?: string | null;

  /** Null: the region's default. */
  rateLimit?: KeyRateLimitDto | null;
}

@ApiSchema({
  name: 'RegionEvent',
  description: 'One change to the region or its keys, recorded with the change itself.',
})
@ApiExtraModels(ApiKeyActorDto, OperatorActorDto, ReporterActorDto)
export class RegionEventDto {
  /** @example 3f6a7c2e-1d4b-4a9c-8e2f-5b6c7d8e9f0a */
  @ApiUuid()
  id: string;

  /**
   * `region.created` (with its first key), `api_key.created`, `api_key.rolled` (on the old key; the new key has its own `api_key.created`), `api_key.updated` (a PATCH; `changes` says what it set), `api_key.revoked` (a DELETE, or a leak report) or `api_key.leak_reported` (the key was reported as leaked: revoked at once, with an `api_key.revoked` of the same reporter, unless it is the region's last managing key, which then shows `leakReportedAt`). A rolled key that reaches its `revokesAt`, or a key its `expiresAt`, stops by itself: the event that set that time already says when.
   * @example api_key.rolled
   */
  type: RegionEventType;

  /** @example 2026-11-22T10:15:00.000Z */
  @ApiDateTime()
  occurredAt: string;

  /** Who made the change. */
  @ApiProperty({
    oneOf: [ApiKeyActorDto, OperatorActorDto, ReporterActorDto].map((actor) => ({ $ref: getSchemaPath(actor) })),
  })
  actor: ApiKeyActorDto | OperatorActorDto | ReporterActorDto;

  /** The key the change acted on. */
  apiKey: RegionEventApiKeyDto;

  /** Only on `api_key.updated`: the fields the change set, with their new values. */
  changes?: ApiKeyChangesDto;

  /**
   * The client address of the request that made the change (for a reporter, theirs); null for operators.
   * @example 203.0.113.7
   */
  clientAddress: string | null;

  /**
   * The X-Request-ID of that request (also in the server logs); null for operators.
   * @example 9b2e4c1a-7f3d-4e8b-a6c5-2d1f0e9b8a7c
   */
  requestId: string | null;

  static from(event: RegionEventRecord): RegionEventDto {
    const { revokesAt, expiresAt, grant, ...apiKey } = event.apiKey;
    return {
      id: event.id,
      type: event.type,
      occurredAt: event.occurredAt.toISOString(),
      actor: event.actor,
      apiKey: {
        ...apiKey,
        ...(revokesAt ? { revokesAt: revokesAt.toISOString() } : {}),
        ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
        ...grant,
      },
      ...(event.changes ? { changes: event.changes } : {}),
      clientAddress: event.clientAddress,
      requestId: event.requestId,
    };
  }
}

@ApiSchema({ name: 'RegionEventPageMeta' })
export class RegionEventPageMetaDto {
  /** @example 20 */
  @ApiInteger()
  limit: number;

  /**
   * Pass as `cursor` for the next (older) page; null on the last page. Opaque, and valid only for the region that received it.
   * @example Xy2MHpOnSw6Mai5LfZ8aAw
   */
  next: string | null;
}

@ApiSchema({ name: 'RegionEventPage' })
export class RegionEventPageDto {
  /** Newest first. */
  data: RegionEventDto[];

  meta: RegionEventPageMetaDto;

  static from(page: RegionEventPage, limit: number): RegionEventPageDto {
    return { data: page.events.map(RegionEventDto.from), meta: { limit, next: page.next } };
  }
}
