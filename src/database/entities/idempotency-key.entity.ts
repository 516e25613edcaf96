import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A claimed Idempotency-Key (common/idempotency). Read and written only with the SQL of
 * IdempotencyStore; the entity is here so that the schema check sees the table.
 */
@Entity('idempotency_keys')
@Check('idempotency_keys_state_check', `"state" IN ('running', 'committed', 'done')`)
export class IdempotencyKey {
  @PrimaryColumn('bytea', { name: 'key_hash', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  keyHash: Buffer;

  @Column('bytea')
  fingerprint: Buffer;

  @Column('text')
  state: string;

  @Column('uuid', { nullable: true })
  token: string | null;

  @Column('timestamptz', { name: 'lease_until' })
  leaseUntil: Date;

  @Index('idempotency_keys_expires_at_idx')
  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('bytea', { nullable: true })
  answer: Buffer | null;
}
