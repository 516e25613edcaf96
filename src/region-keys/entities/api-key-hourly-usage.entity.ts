import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { ApiKey } from './api-key.entity';

/**
 * A key's authenticated requests in one UTC hour, summed over every instance's flushes and
 * kept about a week. Written only by KeyUsageRepository's bulk upsert, never per request.
 */
@Entity('api_key_hourly_usage')
export class ApiKeyHourlyUsage {
  @PrimaryColumn('uuid', { name: 'api_key_id', primaryKeyConstraintName: 'api_key_hourly_usage_pkey' })
  apiKeyId: string;

  @Index('api_key_hourly_usage_hour_idx')
  @PrimaryColumn('timestamptz', { primaryKeyConstraintName: 'api_key_hourly_usage_pkey' })
  hour: Date;

  @Column('bigint')
  requests: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id', foreignKeyConstraintName: 'api_key_hourly_usage_api_key_id_fkey' })
  apiKey?: ApiKey;
}
