import { Injectable } from '@nestjs/common';
import { normalizeEmail } from '../users/email';
import { PasswordHasher } from '../users/password-hasher';
import { type User, UsersService } from '../users/users.service';
import { InvalidCredentialsError } from './auth.errors';
import type { AuthenticatedUser } from './authenticated-user';
import { BasicAuthCache } from './basic-auth-cache';
import { type LoginAllowance, LoginThrottle } from '../common/rate-limit/login-throttle';

export const toAuthenticatedUser = ({ id, name, email }: Pick<User, 'id' | 'name' | 'email'>): AuthenticatedUser => ({ id, name, email });

/** Checks email and password, for POST /auth/token and for Basic credentials. */
@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly throttle: LoginThrottle,
    private readonly basicCache: BasicAuthCache,
  ) {}

  /** For a token: the user, or InvalidCredentialsError (the same for unknown email and wrong password). */
  async signIn(email: string, password: string, clientAddress: string): Promise<{ user: AuthenticatedUser; allowance: LoginAllowance }> {
    const normalized = normalizeEmail(email);
    const allowance = await this.throttle.assertAllowed(clientAddress, normalized);
    const user = await this.users.findByEmail(normalized);
    // Compared even when nobody has this email (against a dummy hash): same time either way.
    const matches = await this.hasher.compare(password, user?.passwordHash ?? null);
    if (!user || !matches) throw new InvalidCredentialsError(await this.throttle.recordFailure(clientAddress, normalized));
    return { user: toAuthenticatedUser(user), allowance };
  }

  /** For Basic, on every request: the user, or null. Recent successes skip bcrypt. */
  async signInBasic(email: string, password: string, clientAddress: string): Promise<AuthenticatedUser | null> {
    const normalized = normalizeEmail(email);
    await this.throttle.assertAllowed(clientAddress, normalized);
    const user = await this.users.findByEmail(normalized);
    const cacheKey = this.basicCache.keyOf(normalized, password);
    // The row is read every time: a deleted user or a changed password ends a cached success.
    if (user && this.basicCache.isVerified(cacheKey, user.id, user.passwordHash)) return toAuthenticatedUser(user);
    const passwordHash = user?.passwordHash ?? null;
    const matches = await this.basicCache.compareOnce(cacheKey, passwordHash, () => this.hasher.compare(password, passwordHash));
    if (user && matches) {
      this.basicCache.remember(cacheKey, user.id, user.passwordHash);
      return toAuthenticatedUser(user);
    }
    await this.throttle.recordFailure(clientAddress, normalized);
    return null;
  }
}
