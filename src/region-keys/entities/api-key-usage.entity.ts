import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { ApiKey } from './api-key.entity';

/**
 * A key's authenticated requests on one UTC day, summed over every instance's flushes.
 * Written only by KeyUsageRepository's bulk upsert, never per request.
 */
@Entity('api_key_usage')
export class ApiKeyUsage {
  @PrimaryColumn('uuid', { name: 'api_key_id', primaryKeyConstraintName: 'api_key_usage_pkey' })
  apiKeyId: string;

  @Index('api_key_usage_day_idx')
  @PrimaryColumn('date', { primaryKeyConstraintName: 'api_key_usage_pkey' })
  day: string;

  @Column('bigint')
  requests: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id', foreignKeyConstraintName: 'api_key_usage_api_key_id_fkey' })
  apiKey?: ApiKey;
}
