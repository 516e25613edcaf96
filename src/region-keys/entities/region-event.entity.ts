import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import type { KeyRateLimit } from '../key-rate-limit';
import { Region } from './region.entity';

/**
 * One change to a region or its keys (region_events), written in the transaction of the
 * change. Rows are only inserted (a trigger refuses UPDATE and DELETE). Key ids are not
 * foreign keys and the previews are copied, so an event reads the same after its keys are
 * revoked.
 */
@Entity('region_events')
@Index('region_events_by_region_newest_idx', ['regionId', 'occurredAt', 'seq'])
@Check(
  'region_events_type_check',
  `"type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked', 'api_key.updated', 'api_key.leak_reported')`,
)
@Check(
  'region_events_actor_check',
  `("actor_type" IN ('operator', 'reporter') AND "actor_api_key_id" IS NULL AND "actor_token_preview" IS NULL)
        OR ("actor_type" = 'api_key' AND "actor_api_key_id" IS NOT NULL AND "actor_token_preview" IS NOT NULL)`,
)
@Check('region_events_rate_limit_check', `jsonb_typeof("api_key_rate_limit") IN ('null', 'object')`)
export class RegionEvent {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'region_events_pkey' })
  id: string;

  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS' })
  seq: string;

  @Column({ name: 'region_id', type: 'uuid' })
  regionId: string;

  @ManyToOne(() => Region, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'region_id', foreignKeyConstraintName: 'region_events_region_id_fkey' })
  region?: Region;

  @Column({ type: 'varchar', length: 32 })
  type: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: string;

  @Column({ name: 'actor_api_key_id', type: 'uuid', nullable: true })
  actorApiKeyId: string | null;

  @Column({ name: 'actor_token_preview', type: 'varchar', length: 32, nullable: true })
  actorTokenPreview: string | null;

  @Column({ name: 'api_key_id', type: 'uuid' })
  apiKeyId: string;

  @Column({ name: 'api_key_token_preview', type: 'varchar', length: 32 })
  apiKeyTokenPreview: string;

  @Column({ name: 'api_key_revokes_at', type: 'timestamptz', nullable: true })
  apiKeyRevokesAt: Date | null;

  /** On region.created, api_key.created and api_key.rolled: the key's permissions. */
  @Column({ name: 'api_key_permissions', type: 'text', array: true, nullable: true })
  apiKeyPermissions: string[] | null;

  /** With apiKeyPermissions: the key's allowlist (null there too when it has none). */
  @Column({ name: 'api_key_allowed_cidrs', type: 'text', array: true, nullable: true })
  apiKeyAllowedCidrs: string[] | null;

  /**
   * With apiKeyPermissions, since it is recorded: the key's own rate limit ({ requests, perSeconds }),
   * or JSON null for the region default; SQL NULL where nothing was recorded.
   */
  @Column({ name: 'api_key_rate_limit', type: 'jsonb', nullable: true })
  apiKeyRateLimit: KeyRateLimit | null;

  /** When the key acted on expires, on the events that create, roll or update one that does. */
  @Column({ name: 'api_key_expires_at', type: 'timestamptz', nullable: true })
  apiKeyExpiresAt: Date | null;

  /** On a roll's api_key.rolled: the key that replaces the one rolled. */
  @Column({ name: 'api_key_replaced_by_id', type: 'uuid', nullable: true })
  apiKeyReplacedById: string | null;

  @Column({ name: 'api_key_replaced_by_token_preview', type: 'varchar', length: 32, nullable: true })
  apiKeyReplacedByTokenPreview: string | null;

  /** On a roll's api_key.created: the key the new one replaces. */
  @Column({ name: 'api_key_replaces_id', type: 'uuid', nullable: true })
  apiKeyReplacesId: string | null;

  /** On api_key.updated: the fields the change set, with their new values. */
  @Column({ type: 'jsonb', nullable: true })
  changes: Record<string, unknown> | null;

  @Column({ name: 'client_address', type: 'varchar', length: 64, nullable: true })
  clientAddress: string | null;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId: string | null;
}
