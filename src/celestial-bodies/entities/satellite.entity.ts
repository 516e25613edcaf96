import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

import { sqlValues } from '../../database';
import { SATELLITE_TYPES, type SatelliteType } from '../celestial-body-types';
import { Planet } from './planet.entity';

/** A moon, asteroid or comet orbiting one planet. It goes when its planet goes (ON DELETE CASCADE). */
@Entity('satellites')
// Leads with planet_id: serves the foreign key and "the satellites of these planets, in order".
@Index('satellites_planet_id_idx', ['planetId', 'id'])
@Check('satellites_type_check', `"type" IN (${sqlValues(SATELLITE_TYPES)})`)
@Check('satellites_diameter_check', '"diameter" > 0')
export class Satellite {
  @PrimaryGeneratedColumn('identity', {
    type: 'integer',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'satellites_pkey',
  })
  id: number;

  @Column({ name: 'planet_id', type: 'integer' })
  planetId: number;

  @ManyToOne(() => Planet, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'planet_id', foreignKeyConstraintName: 'satellites_planet_id_fkey' })
  planet?: Planet;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description: string | null;

  @Column({ type: 'double precision', nullable: true })
  diameter: number | null;

  @Column({ type: 'varchar', length: 20 })
  type: SatelliteType;

  @Column({ name: 'orbital_period', type: 'double precision', nullable: true })
  orbitalPeriod: number | null;

  @Column({ type: 'double precision', nullable: true })
  distance: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
