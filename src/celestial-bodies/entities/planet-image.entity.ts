import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import type { ImageType } from '../image-upload';
import { Planet } from './planet.entity';

/**
 * The uploaded image of a planet, in PostgreSQL so that every instance serves it. A table
 * of its own, and `data` is never selected unless asked for, so planet reads stay small.
 */
@Entity('planet_images')
export class PlanetImage {
  @PrimaryColumn({ name: 'planet_id', type: 'integer', primaryKeyConstraintName: 'planet_images_pkey' })
  planetId: number;

  @ManyToOne(() => Planet, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'planet_id', foreignKeyConstraintName: 'planet_images_planet_id_fkey' })
  planet?: Planet;

  /** Detected from the bytes, never taken from the upload's declared type. */
  @Column({ name: 'content_type', type: 'varchar', length: 32 })
  contentType: ImageType;

  @Column({ name: 'byte_size', type: 'integer' })
  byteSize: number;

  /** Hex SHA-256 of `data`; the ETag. */
  @Column({ type: 'char', length: 64 })
  sha256: string;

  @Column({ type: 'bytea', select: false })
  data?: Buffer;

  @Column({ name: 'uploaded_at', type: 'timestamptz' })
  uploadedAt: Date;
}
