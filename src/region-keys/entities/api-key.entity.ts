import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';

import type { Permission } from '../permissions';
import { Region } from './region.entity';

/**
 * An API key of a region. Only the SHA-256 of the key is kept. Revoked keys stay as rows
 * with `revokedAt` set, as an audit trail.
 */
@Entity('api_keys')
@Index('api_keys_active_by_region_idx', ['regionId', 'createdAt'], { where: '"revoked_at" IS NULL' })
@Index('api_keys_expiring_idx', ['expiresAt'], { where: '"expires_at" IS NOT NULL AND "revoked_at" IS NULL' })
@Check(
  'api_keys_permissions_check',
  `"permissions" <@ ARRAY['region:read', 'keys:write']::text[] AND cardinality("permissions") > 0`,
)
@Check(
  'api_keys_rate_limit_check',
  `("rate_limit_requests" IS NULL) = ("rate_limit_per_seconds" IS NULL) AND "rate_limit_requests" BETWEEN 1 AND 100000 AND "rate_limit_per_seconds" BETWEEN 1 AND 3600`,
)
export class ApiKey {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'api_keys_pkey' })
  id: string;

  @Column({ name: 'region_id', type: 'uuid' })
  regionId: string;

  @ManyToOne(() => Region, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'region_id', foreignKeyConstraintName: 'api_keys_region_id_fkey' })
  region?: Region;

  @Index('api_keys_token_hash_key', { unique: true })
  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ name: 'token_preview', type: 'varchar', length: 32 })
  tokenPreview: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** What the key may do: a non-empty subset of PERMISSIONS. */
  @Column({ type: 'text', array: true })
  permissions: Permission[];

  /** The networks (canonical CIDRs) the key may be used from; null: any address. */
  @Column({ name: 'allowed_cidrs', type: 'text', array: true, nullable: true })
  allowedCidrs: string[] | null;

  /** Set when the key is rolled: it stops authenticating at this time. Null: never. */
  @Column({ name: 'revokes_at', type: 'timestamptz', nullable: true })
  revokesAt: Date | null;

  /** When the key stops working by itself, as chosen on create, roll or PATCH. Null: never. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** The key's own rate limit, with rateLimitPerSeconds; both null: the region default (REGION_KEY_RATE_LIMIT). */
  @Column({ name: 'rate_limit_requests', type: 'integer', nullable: true })
  rateLimitRequests: number | null;

  @Column({ name: 'rate_limit_per_seconds', type: 'integer', nullable: true })
  rateLimitPerSeconds: number | null;

  /** When a leak of the key was first reported while the last-key rule kept it from being revoked. Null: never. */
  @Column({ name: 'leak_reported_at', type: 'timestamptz', nullable: true })
  leakReportedAt: Date | null;
}
