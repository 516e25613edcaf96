import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { normalizeEmail } from './email';
import type { User } from './entities/user.entity';
import { PasswordHasher } from './password-hasher';
import { EmailTakenError } from './users.errors';
import { type UserCredentials, type UserIdentity, UsersRepository } from './users.repository';

// The users feature's records, as its service hands them out.
export type { User };

/** What anyone may know of a user: the Galaxy `User`. */
export type UserProfile = Pick<User, 'id' | 'name'>;

// Not a bcrypt hash, so no password ever matches it.
const UNUSABLE_PASSWORD_HASH = '!unusable';

export interface SignUp {
  name?: string | null;
  email: string;
  password: string;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly repository: UsersRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async signUp({ name, email, password }: SignUp): Promise<User> {
    const passwordHash = await this.hasher.hash(password);
    const user = await this.repository.insertUnlessEmailTaken({ name: name ?? null, email: normalizeEmail(email), passwordHash });
    if (!user) throw new EmailTakenError();
    return user;
  }

  findByEmail(email: string): Promise<UserCredentials | null> {
    return this.repository.findByEmail(normalizeEmail(email));
  }

  findById(id: number): Promise<UserIdentity | null> {
    return this.repository.findById(id);
  }

  /** The profiles of these users, by id; one query whatever their number. */
  async findProfiles(ids: number[]): Promise<Map<number, UserProfile>> {
    const unique = [...new Set(ids)];
    const profiles = unique.length === 0 ? [] : await this.repository.findProfiles(unique);
    return new Map(profiles.map(({ id, name }) => [id, { id, name }]));
  }

  /**
   * An account that owns data the service makes itself (the sample planets): nobody can
   * sign in as it, and nobody can sign up with its email. Null when the email is taken.
   * Runs in the caller's transaction, so the account and what it owns appear together.
   */
  async createAccountWithoutSignIn(manager: EntityManager, { name, email }: { name: string; email: string }): Promise<User | null> {
    const normalized = normalizeEmail(email);
    if (await this.repository.existsWithEmail(manager, normalized)) return null;
    return this.repository.insert(manager, { name, email: normalized, passwordHash: UNUSABLE_PASSWORD_HASH });
  }
}
