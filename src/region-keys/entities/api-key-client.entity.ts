import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { ApiKey } from './api-key.entity';

/**
 * A client (address and user agent) that used a key, with its first and last request and how
 * many it made. Written only by KeyUsageRepository's bulk upsert, never per request.
 */
@Entity('api_key_clients')
export class ApiKeyClient {
  @PrimaryColumn('uuid', { name: 'api_key_id', primaryKeyConstraintName: 'api_key_clients_pkey' })
  apiKeyId: string;

  @PrimaryColumn('varchar', { length: 64, primaryKeyConstraintName: 'api_key_clients_pkey' })
  address: string;

  /** Cut at 200 characters; '' when the client sent none. */
  @PrimaryColumn('varchar', { name: 'user_agent', length: 200, primaryKeyConstraintName: 'api_key_clients_pkey' })
  userAgent: string;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  @Index('api_key_clients_last_seen_at_idx')
  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;

  @Column('bigint')
  requests: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id', foreignKeyConstraintName: 'api_key_clients_api_key_id_fkey' })
  apiKey?: ApiKey;
}
