import { Injectable } from '@nestjs/common';

import { ValidationFailedError } from '../common/problem';
import type { Transaction } from '../database';
import { canonicalEmail, checkEmail } from './email';
import type { User } from './entities/user.entity';
import { PasswordHasher } from './password-hasher';
import { EmailTakenError } from './users.errors';
import { type UserCredentials, type UserIdentity, UsersRepository } from './users.repository';

/** A user account as other features see it (the users table stays this feature's own). */
export interface UserAccount {
  id: number;
  name: string | null;
  email: string;
}

/** What anyone may know of a user: the Galaxy `User`. */
export type UserProfile = Pick<UserAccount, 'id' | 'name'>;

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

  /**
   * After a right password: a hash made at another BCRYPT_COST than the current one is made
   * again at the current cost, so that a changed cost reaches each account as it signs in.
   * The user with the hash it now has.
   */
  async upgradePasswordHash(user: UserCredentials, password: string): Promise<UserCredentials> {
    if (!this.hasher.needsRehash(user.passwordHash)) return user;
    const passwordHash = await this.hasher.hash(password);
    await this.repository.replacePasswordHash(user.id, user.passwordHash, passwordHash);
    return { ...user, passwordHash };
  }

  findById(id: number): Promise<UserIdentity | null> {
    return this.repository.findById(id);
  }

  /** The profiles of these users, by id; one query whatever their number. In the caller's transaction when given one. */
  async findProfiles(ids: number[], tx?: Transaction): Promise<Map<number, UserProfile>> {
    const unique = [...new Set(ids)];
    const profiles = unique.length === 0 ? [] : await this.repository.findProfiles(unique, tx);
    return new Map(profiles.map(({ id, name }) => [id, { id, name }]));
  }

  /**
   * An account that owns data the service makes itself (the sample planets): nobody can
   * sign in as it, and nobody can sign up with its email. Null when the email is taken.
   * Runs in the caller's transaction, so the account and what it owns appear together.
   */
  async createAccountWithoutSignIn(
    tx: Transaction,
    { name, email }: { name: string; email: string },
  ): Promise<UserAccount | null> {
    const checked = checkEmail(email);
    if (!checked.ok) throw new Error(`Not a usable email for an account: ${checked.problem}`);
    if (await this.repository.existsWithCanonicalEmail(tx, checked.canonical)) return null;
    const user = await this.repository.insert(tx, {
      name,
      email: checked.email,
      emailCanonical: checked.canonical,
      passwordHash: UNUSABLE_PASSWORD_HASH,
    });
    return { id: user.id, name: user.name, email: user.email };
  }
}
