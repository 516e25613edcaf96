import { AuthService } from '../../src/auth/auth.service';
import type { AuthSettings } from '../../src/auth/auth.settings';
import { BasicAuthCache } from '../../src/auth/basic-auth-cache';
import { LoginThrottle } from '../../src/auth/login-throttle';
import { PasswordCheckSlots } from '../../src/auth/password-check-slots';
import { NoSecurityCounters } from '../../src/common/metrics/security-counters';
import { RateLimitStore } from '../../src/common/rate-limit/rate-limit-store';
import type { AppConfig } from '../../src/config/app-config';
import { PasswordHasher } from '../../src/users/password-hasher';
import type { UsersService } from '../../src/users/users.service';
import type { UsersSettings } from '../../src/users/users.settings';

const baseConfig = {
  BCRYPT_COST: 4,
  BASIC_AUTH_CACHE_TTL_SECONDS: 300,
  BASIC_AUTH_CACHE_MAX_ENTRIES: 100,
  LOGIN_FAILURE_LIMIT: 1000,
  LOGIN_ADDRESS_FAILURE_LIMIT: 1000,
  LOGIN_FAILURE_WINDOW_SECONDS: 60,
};

/** AuthService with real bcrypt (cost 4), cache and throttle; the users come from a list. */
async function setup(overrides: Partial<AppConfig & AuthSettings & UsersSettings> = {}) {
  const config = { ...baseConfig, ...overrides } as AppConfig & AuthSettings & UsersSettings;
  const hasher = new PasswordHasher(config);
  hasher.onModuleInit();
  const ann = { id: 1, name: 'Ann', email: 'ann@example.com', passwordHash: await hasher.hash('right password') };
  const users = {
    findByEmail: async (email: string) => (email === ann.email ? { ...ann } : null),
    upgradePasswordHash: async (user: typeof ann) => user,
  } as unknown as UsersService;
  const auth = new AuthService(
    users,
    hasher,
    new LoginThrottle(
      new RateLimitStore({ REDIS_KEY_PREFIX: '', REDIS_COMMAND_TIMEOUT_MS: 1000 }),
      config,
      new NoSecurityCounters(),
    ),
    new BasicAuthCache(config),
    new NoSecurityCounters(),
    new PasswordCheckSlots(),
  );
  return { auth, compare: jest.spyOn(hasher, 'compare'), ann };
}

const times = <T>(n: number, fn: () => Promise<T>) => Promise.all(Array.from({ length: n }, fn));

describe('Basic credentials arriving together', () => {
  it('cost one bcrypt comparison for 32 simultaneous first requests, and all 32 get the user', async () => {
    const { auth, compare, ann } = await setup();
    const results = await times(32, () => auth.signInBasic(ann.email, 'right password', '192.0.2.1'));
    expect(compare).toHaveBeenCalledTimes(1);
    expect(results.every((user) => user?.id === ann.id)).toBe(true);
    // Remembered afterwards: the next request costs none.
    await auth.signInBasic(ann.email, 'right password', '192.0.2.1');
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('take one slot of the failed-login allowance between them, so all 32 pass a limit of 10', async () => {
    const { auth, compare, ann } = await setup({ LOGIN_FAILURE_LIMIT: 10 });
    const results = await times(32, () => auth.signInBasic(ann.email, 'right password', '192.0.2.1'));
    expect(results.every((user) => user?.id === ann.id)).toBe(true);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it("share a wrong password's result too, refuse all of them, and remember nothing", async () => {
    const { auth, compare, ann } = await setup();
    const results = await times(32, () => auth.signInBasic(ann.email, 'wrong password', '192.0.2.1'));
    expect(results.every((user) => user === null)).toBe(true);
    expect(compare).toHaveBeenCalledTimes(1);
    await auth.signInBasic(ann.email, 'wrong password', '192.0.2.1');
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('never share a result between different passwords', async () => {
    const { auth, compare, ann } = await setup();
    const [right, wrong] = await Promise.all([
      auth.signInBasic(ann.email, 'right password', '192.0.2.1'),
      auth.signInBasic(ann.email, 'wrong password', '192.0.2.1'),
    ]);
    expect(right?.id).toBe(ann.id);
    expect(wrong).toBeNull();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('compare once for an unknown email too, and refuse', async () => {
    const { auth, compare } = await setup();
    const results = await times(8, () => auth.signInBasic('nobody@example.com', 'any password', '192.0.2.1'));
    expect(results.every((user) => user === null)).toBe(true);
    expect(compare).toHaveBeenCalledTimes(1);
  });
});
