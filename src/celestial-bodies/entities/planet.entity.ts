import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  ForeignKey,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

import { sqlValues } from '../../database';
import { PLANET_TYPES, type PlanetType } from '../celestial-body-types';
import type { PlanetImage } from './planet-image.entity';

/** One gas of an atmosphere. Kept as JSON on the planet: it is always read and written whole. */
export interface AtmosphereComponent {
  compound: string;
  percentage: number;
}

/**
 * A planet of the Galaxy. The Galaxy's nested `physicalProperties` are plain columns (each
 * one typed and checkable), and any further measurements one JSON object; the atmosphere is
 * a JSON array, and tags a text array.
 */
@Entity('planets')
@Index('planets_creator_id_idx', ['creatorId'])
@Check('planets_type_check', `"type" IN (${sqlValues(PLANET_TYPES)})`)
@Check('planets_habitability_index_check', '"habitability_index" BETWEEN 0 AND 1')
@Check('planets_mass_check', '"mass" > 0')
@Check('planets_radius_check', '"radius" > 0')
export class Planet {
  @PrimaryGeneratedColumn('identity', {
    type: 'integer',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'planets_pkey',
  })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 20, nullable: true })
  type: PlanetType | null;

  @Column({ name: 'habitability_index', type: 'double precision', nullable: true })
  habitabilityIndex: number | null;

  @Column({ type: 'double precision', nullable: true })
  mass: number | null;

  @Column({ type: 'double precision', nullable: true })
  radius: number | null;

  @Column({ type: 'double precision', nullable: true })
  gravity: number | null;

  @Column({ name: 'temperature_min', type: 'double precision', nullable: true })
  temperatureMin: number | null;

  @Column({ name: 'temperature_max', type: 'double precision', nullable: true })
  temperatureMax: number | null;

  @Column({ name: 'temperature_average', type: 'double precision', nullable: true })
  temperatureAverage: number | null;

  /** The Galaxy's further `physicalProperties` (its `additionalProperties`), by name. */
  @Column({ name: 'extra_measurements', type: 'jsonb', default: {} })
  extraMeasurements: Record<string, number>;

  @Column({ type: 'jsonb' })
  atmosphere: AtmosphereComponent[];

  @Column({ name: 'discovered_at', type: 'timestamptz', nullable: true })
  discoveredAt: Date | null;

  @Column({ type: 'text', array: true })
  tags: string[];

  /**
   * The database keeps this an existing user (a foreign key to the users table, named by
   * table, not by entity): this module reads its creators through the users service.
   */
  @Column({ name: 'creator_id', type: 'integer' })
  @ForeignKey('users', 'id', { name: 'planets_creator_id_fkey', onDelete: 'RESTRICT' })
  creatorId: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** Not a column: the image's metadata (never its bytes), joined in by the reads that need it. */
  image?: PlanetImage | null;
}
