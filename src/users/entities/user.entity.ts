import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A person who signed up. `emailCanonical` identifies the account (see checkEmail in
 * ../email.ts) and is unique in the database, so two sign-ups racing with look-alike
 * spellings cannot both succeed; `email` is the same address as it is shown and written to.
 */
@Entity('users')
export class User {
  @PrimaryGeneratedColumn('identity', {
    type: 'integer',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'users_pkey',
  })
  id: number;

  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  @Column({ type: 'varchar', length: 254 })
  email: string;

  /**
   * Null only for accounts that an address rule set aside (see the migration
   * UsersEmailCanonical1764000000000): they exist, but nobody can sign in as them by email.
   */
  @Index('users_email_canonical_key', { unique: true })
  @Column({ name: 'email_canonical', type: 'varchar', length: 254, nullable: true })
  emailCanonical: string | null;

  /** bcrypt hash (60 characters today; room for a longer algorithm later). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
