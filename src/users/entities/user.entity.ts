import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A person who signed up. `email` is stored trimmed and lower-cased; the database also
 * keeps it unique case-insensitively (an expression index on lower(email), which TypeORM
 * cannot describe, hence `synchronize: false`: the migration owns it).
 */
@Entity('users')
@Index('users_email_lower_key', { synchronize: false })
export class User {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'users_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  @Column({ type: 'varchar', length: 254 })
  email: string;

  /** bcrypt hash (60 characters today; room for a longer algorithm later). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
