import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ValidationFailedError } from '../common/problem/problem';
import { canonicalEmail, checkEmail } from './email';
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
    const checked = checkEmail(email);
    if (!checked.ok) throw new ValidationFailedError([{ field: 'email', message: checked.problem }]);
    const passwordHash = await this.hasher.hash(password);
    const user = await this.repository.insertUnlessEmailTaken({
      name: name ?? null,
      email: checked.email,
      emailCanonical: checked.canonical,
      passwordHash,
    });
    if (!user) throw new EmailTakenError();
    return user;
  }

  /** By any spelling of the address: the same canonical form finds the same user. */
  async findByEmail(email: string): Promise<UserCredentials | null> {
    const canonical = canonicalEmail(email);
    // No account has an address that is refused: nothing to look up.
    return canonical === null ? null : this.repository.findByCanonicalEmail(canonical);
  }

  findById(id: number): Promise<UserIdentity | null> {
    return this.repository.findById(id);
  }

  /** The profiles of these users, by id; one query whatever their number. */
  async findProfiles(ids: number[], manager?: EntityManager): Promise<Map<number, UserProfile>> {
    const unique = [...new Set(ids)];
    const profiles = unique.length === 0 ? [] : await this.repository.findProfiles(unique, manager);
    return new Map(profiles.map(({ id, name }) => [id, { id, name }]));
  }

  /**
   * An account that owns data the service makes itself (the sample planets): nobody can
   * sign in as it, and nobody can sign up with its email. Null when the email is taken.
   * Runs in the caller's transaction, so the account and what it owns appear together.
   */
  async createAccountWithoutSignIn(manager: EntityManager, { name, email }: { name: string; email: string }): Promise<User | null> {
    const checked = checkEmail(email);
    if (!checked.ok) throw new Error(`Not a usable email for an account: ${checked.problem}`);
    if (await this.repository.existsWithCanonicalEmail(manager, checked.canonical)) return null;
    return this.repository.insert(manager, { name, email: checked.email, emailCanonical: checked.canonical, passwordHash: UNUSABLE_PASSWORD_HASH });
  }
}
