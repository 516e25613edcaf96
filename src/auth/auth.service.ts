import { Injectable } from '@nestjs/common';

import { SecurityCounters } from '../common/metrics';
import { canonicalEmail, PasswordHasher, type UserAccount, type UserCredentials, UsersService } from '../users';
import { InvalidCredentialsError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { BasicAuthCache } from './basic-auth-cache';
import { type LoginAllowance, LoginThrottle } from './login-throttle';
import { PasswordCheckSlots } from './password-check-slots';

export const toAuthenticatedUser = ({ id, name, email }: UserAccount): AuthenticatedUser => ({
  id,
  name,
  email,
});

/** Checks email and password, for POST /auth/token and for Basic credentials. */
@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly throttle: LoginThrottle,
    private readonly basicCache: BasicAuthCache,
    private readonly counters: SecurityCounters,
    private readonly slots: PasswordCheckSlots,
  ) {}

  /** For a token: the user, or InvalidCredentialsError (the same for unknown email and wrong password). */
  async signIn(
    email: string,
    password: string,
    clientAddress: string,
  ): Promise<{ user: AuthenticatedUser; allowance: LoginAllowance }> {
    // Counted and looked up under the canonical form: another spelling of one address is
    // the same account, and must not be a fresh allowance of guesses either.
    const normalized = canonicalEmail(email) ?? email;
    const { result: user, allowance } = await this.throttle.attempt(clientAddress, normalized, async () =>
      this.checkPassword(await this.users.findByEmail(normalized), password, clientAddress),
    );
    if (!user) {
      this.counters.signInFailed('token');
      throw new InvalidCredentialsError(allowance);
    }
    return { user: toAuthenticatedUser(user), allowance };
  }

  /** For Basic, on every request: the user, or null. Recent successes skip bcrypt. */
  async signInBasic(email: string, password: string, clientAddress: string): Promise<AuthenticatedUser | null> {
    const normalized = canonicalEmail(email) ?? email;
    const user = await this.users.findByEmail(normalized);
    const cacheKey = this.basicCache.keyOf(normalized, password);
    // The row is read every time: a deleted user or a changed password ends a cached success.
    if (user && this.basicCache.isVerified(cacheKey, user.id, user.passwordHash)) {
      await this.throttle.assertAllowed(clientAddress, normalized);
      return toAuthenticatedUser(user);
    }
    // Simultaneous first requests with the same credentials share one attempt.
    return this.basicCache.checkOnce(cacheKey, clientAddress, user?.passwordHash ?? null, async () => {
      const { result } = await this.throttle.attempt(clientAddress, normalized, async () => {
        const checked = await this.checkPassword(user, password, clientAddress);
        if (!checked) {
          this.counters.signInFailed('basic');
          return null;
        }
        this.basicCache.remember(cacheKey, checked.id, checked.passwordHash);
        return toAuthenticatedUser(checked);
      });
      return result;
    });
  }

  /**
   * The user (with the hash brought to the current cost) when the password is theirs, else null.
   * Compared even when nobody has this email (against a dummy hash): same time either way.
   */
  private checkPassword(user: UserCredentials | null, password: string, clientAddress: string) {
    return this.slots.run(clientAddress, async () => {
      const matches = await this.hasher.compare(password, user?.passwordHash ?? null);
      return user && matches ? this.users.upgradePasswordHash(user, password) : null;
    });
  }
}
