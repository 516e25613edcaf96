import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { managerOf, type Transaction } from '../database';
import type { KeyRateLimit } from './key-rate-limit';

export const REGION_EVENT_TYPES = [
  'region.created',
  'api_key.created',
  'api_key.rolled',
  'api_key.revoked',
  'api_key.updated',
  'api_key.leak_reported',
] as const;
export type RegionEventType = (typeof REGION_EVENT_TYPES)[number];

/**
 * Who made a change: a region API key (over HTTP), an operator (CLI, first start), or someone
 * who reported the key as leaked (POST /auth/region/api-keys/leaked, no credentials: the
 * event's client address is theirs).
 */
export type EventActor =
  { type: 'api_key'; apiKeyId: string; tokenPreview: string } | { type: 'operator' } | { type: 'reporter' };

/**
 * The key a change acted on; `revokesAt` only on `api_key.rolled`, when the old key stops,
 * with `replacedBy`, the new key; `replaces` on the new key's `api_key.created`, the old key;
 * `grant` on the events that create or roll a key: what it may do, from where, and how often;
 * `expiresAt` on the events that create, roll or update a key that expires.
 */
export interface EventApiKey {
  id: string;
  tokenPreview: string;
  revokesAt?: Date;
  expiresAt?: Date;
  /** `rateLimit` null: the region default; absent: not recorded (events written before it was). */
  grant?: { permissions: string[]; allowedCidrs: string[] | null; rateLimit?: KeyRateLimit | null };
  replacedBy?: { id: string; tokenPreview: string };
  replaces?: { id: string };
}

/** What an api_key.updated set, by field, with the new values (timestamps as ISO strings). */
export interface KeyChanges {
  description?: string | null;
  permissions?: string[];
  allowedCidrs?: string[] | null;
  expiresAt?: string | null;
  rateLimit?: { requests: number; perSeconds: number } | null;
}

export interface RegionEventRecord {
  id: string;
  /** Insertion order, a bigint as text: internal, it orders events of the same millisecond. */
  seq: string;
  type: RegionEventType;
  occurredAt: Date;
  actor: EventActor;
  apiKey: EventApiKey;
  /** Only on api_key.updated. */
  changes?: KeyChanges;
  clientAddress: string | null;
  requestId: string | null;
}

export type NewRegionEvent = Omit<RegionEventRecord, 'seq'> & { regionId: string };

/** Where a listing resumes: after this event, in newest-first order. */
export interface EventPosition {
  occurredAt: Date;
  seq: string;
}

interface RegionEventRow {
  id: string;
  seq: string;
  type: RegionEventType;
  occurredAt: Date;
  actorType: EventActor['type'];
  actorApiKeyId: string | null;
  actorTokenPreview: string | null;
  apiKeyId: string;
  apiKeyTokenPreview: string;
  apiKeyRevokesAt: Date | null;
  apiKeyPermissions: string[] | null;
  apiKeyAllowedCidrs: string[] | null;
  apiKeyRateLimit: KeyRateLimit | null;
  apiKeyRateLimitRecorded: boolean;
  apiKeyExpiresAt: Date | null;
  apiKeyReplacedById: string | null;
  apiKeyReplacedByTokenPreview: string | null;
  apiKeyReplacesId: string | null;
  changes: KeyChanges | null;
  clientAddress: string | null;
  requestId: string | null;
}

const COLUMNS = 20;

/**
 * The region's audit trail (region_events): rows are only inserted, in the transaction of
 * the change they record, and never updated or deleted (a trigger refuses both).
 */
@Injectable()
export class RegionEventsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(tx: Transaction, events: NewRegionEvent[]): Promise<void> {
    const placeholders = events.map(
      (_, row) => `(${Array.from({ length: COLUMNS }, (__, column) => `$${row * COLUMNS + column + 1}`).join(', ')})`,
    );
    const values = events.flatMap((event) => [
      event.id,
      event.regionId,
      event.type,
      event.occurredAt,
      event.actor.type,
      event.actor.type === 'api_key' ? event.actor.apiKeyId : null,
      event.actor.type === 'api_key' ? event.actor.tokenPreview : null,
      event.apiKey.id,
      event.apiKey.tokenPreview,
      event.apiKey.revokesAt ?? null,
      event.apiKey.grant?.permissions ?? null,
      event.apiKey.grant?.allowedCidrs ?? null,
      // JSON null (the region default) is recorded; SQL NULL is nothing recorded.
      event.apiKey.grant?.rateLimit === undefined ? null : JSON.stringify(event.apiKey.grant.rateLimit),
      event.apiKey.expiresAt ?? null,
      event.apiKey.replacedBy?.id ?? null,
      event.apiKey.replacedBy?.tokenPreview ?? null,
      event.apiKey.replaces?.id ?? null,
      event.changes === undefined ? null : JSON.stringify(event.changes),
      event.clientAddress,
      event.requestId,
    ]);
    await managerOf(tx).query(
      `INSERT INTO region_events (id, region_id, type, occurred_at, actor_type, actor_api_key_id, actor_token_preview,
         api_key_id, api_key_token_preview, api_key_revokes_at, api_key_permissions, api_key_allowed_cidrs, api_key_rate_limit,
         api_key_expires_at,
         api_key_replaced_by_id, api_key_replaced_by_token_preview, api_key_replaces_id, changes, client_address, request_id)
       VALUES ${placeholders.join(', ')}`,
      values,
    );
  }

  /** Where the listing stands at an event of this region; null when the region has no such event. */
  async findPosition(regionId: string, eventId: string): Promise<EventPosition | null> {
    const rows: EventPosition[] = await this.dataSource.query(
      `SELECT occurred_at AS "occurredAt", seq FROM region_events WHERE id = $1 AND region_id = $2`,
      [eventId, regionId],
    );
    return rows[0] ?? null;
  }

  /**
   * Newest first (by time, then by insertion); `after` resumes strictly past an event
   * already listed (keyset, so new events do not shift later pages).
   */
  async listByRegion(regionId: string, limit: number, after: EventPosition | null): Promise<RegionEventRecord[]> {
    const rows: RegionEventRow[] = await this.dataSource.query(
      `SELECT id, seq, type, occurred_at AS "occurredAt", actor_type AS "actorType", actor_api_key_id AS "actorApiKeyId",
              actor_token_preview AS "actorTokenPreview", api_key_id AS "apiKeyId", api_key_token_preview AS "apiKeyTokenPreview",
              api_key_revokes_at AS "apiKeyRevokesAt", api_key_permissions AS "apiKeyPermissions",
              api_key_allowed_cidrs AS "apiKeyAllowedCidrs", api_key_rate_limit AS "apiKeyRateLimit",
              api_key_rate_limit IS NOT NULL AS "apiKeyRateLimitRecorded", api_key_expires_at AS "apiKeyExpiresAt",
              api_key_replaced_by_id AS "apiKeyReplacedById", api_key_replaced_by_token_preview AS "apiKeyReplacedByTokenPreview",
              api_key_replaces_id AS "apiKeyReplacesId", changes,
              client_address AS "clientAddress", request_id AS "requestId"
         FROM region_events
        WHERE region_id = $1 ${after ? 'AND (occurred_at, seq) < ($3, $4)' : ''}
        ORDER BY occurred_at DESC, seq DESC
        LIMIT $2`,
      after ? [regionId, limit, after.occurredAt, after.seq] : [regionId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      seq: row.seq,
      type: row.type,
      occurredAt: row.occurredAt,
      actor:
        row.actorType === 'api_key'
          ? { type: 'api_key', apiKeyId: row.actorApiKeyId!, tokenPreview: row.actorTokenPreview! }
          : { type: row.actorType },
      apiKey: {
        id: row.apiKeyId,
        tokenPreview: row.apiKeyTokenPreview,
        ...(row.apiKeyRevokesAt ? { revokesAt: row.apiKeyRevokesAt } : {}),
        ...(row.apiKeyExpiresAt ? { expiresAt: row.apiKeyExpiresAt } : {}),
        ...(row.apiKeyPermissions
          ? {
              grant: {
                permissions: row.apiKeyPermissions,
                allowedCidrs: row.apiKeyAllowedCidrs,
                ...(row.apiKeyRateLimitRecorded ? { rateLimit: row.apiKeyRateLimit } : {}),
              },
            }
          : {}),
        ...(row.apiKeyReplacedById
          ? { replacedBy: { id: row.apiKeyReplacedById, tokenPreview: row.apiKeyReplacedByTokenPreview! } }
          : {}),
        ...(row.apiKeyReplacesId ? { replaces: { id: row.apiKeyReplacesId } } : {}),
      },
      ...(row.changes ? { changes: row.changes } : {}),
      clientAddress: row.clientAddress,
      requestId: row.requestId,
    }));
  }
}
