import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** An education region. Regions are created by operators (CLI or first start), not over HTTP. */
@Entity('regions')
export class Region {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'regions_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
