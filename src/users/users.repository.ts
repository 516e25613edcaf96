import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';

import { isUniqueViolation, managerOf, type Transaction } from '../database';
import { User } from './entities/user.entity';

export type NewUser = Pick<User, 'name' | 'email' | 'passwordHash'> & { emailCanonical: string };
export type UserIdentity = Pick<User, 'id' | 'name' | 'email'>;
export type UserCredentials = UserIdentity & Pick<User, 'passwordHash'>;

const EMAIL_UNIQUE_INDEX = 'users_email_canonical_key';

/** All SQL of the users feature. */
@Injectable()
export class UsersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One INSERT; null when the email is taken. The unique index decides, not a SELECT
   * before: of two sign-ups racing with one email, exactly one insert succeeds.
   */
  async insertUnlessEmailTaken(user: NewUser): Promise<User | null> {
    const repository = this.dataSource.getRepository(User);
    const entity = repository.create(user);
    try {
      // insert() writes the generated id and timestamps (RETURNING) back into `entity`.
      await repository.insert(entity);
      return entity;
    } catch (err) {
      if (isUniqueViolation(err, EMAIL_UNIQUE_INDEX)) return null;
      throw err;
    }
  }

  /**
   * Uses the unique index on email_canonical. Plain SQL to a plain object: this runs on
   * every Basic request, where TypeORM's query building and hydration cost more than the query.
   */
  async findByCanonicalEmail(canonical: string): Promise<UserCredentials | null> {
    const rows: UserCredentials[] = await this.dataSource.query(
      'SELECT id, name, email, password_hash AS "passwordHash" FROM users WHERE email_canonical = $1',
      [canonical],
    );
    return rows[0] ?? null;
  }

  /** Only while the hash is still `current`: a password changed meanwhile stays as it is. */
  async replacePasswordHash(id: number, current: string, passwordHash: string): Promise<void> {
    await this.dataSource.getRepository(User).update({ id, passwordHash: current }, { passwordHash });
  }

  /** Every Bearer request: as findByEmail, and without the password hash. */
  async findById(id: number): Promise<UserIdentity | null> {
    const rows: UserIdentity[] = await this.dataSource.query('SELECT id, name, email FROM users WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  /** One query, id and name only, for any number of users; in the caller's transaction when given one. */
  findProfiles(ids: number[], tx?: Transaction): Promise<Pick<User, 'id' | 'name'>[]> {
    return managerOf(tx, this.dataSource)
      .getRepository(User)
      .find({ select: { id: true, name: true }, where: { id: In(ids) } });
  }

  /** Inside the caller's transaction. */
  existsWithCanonicalEmail(tx: Transaction, canonical: string): Promise<boolean> {
    return managerOf(tx).getRepository(User).existsBy({ emailCanonical: canonical });
  }

  /** Inside the caller's transaction. */
  async insert(tx: Transaction, user: NewUser): Promise<User> {
    const repository = managerOf(tx).getRepository(User);
    const entity = repository.create(user);
    await repository.insert(entity);
    return entity;
  }
}
