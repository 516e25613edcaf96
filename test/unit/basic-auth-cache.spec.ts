import type { AuthSettings } from '../../src/auth/auth.settings';
import { BasicAuthCache } from '../../src/auth/basic-auth-cache';

/** The cache with a clock the test moves by hand. */
class ManualClockCache extends BasicAuthCache {
  time = 1_000_000;
  protected override now(): number {
    return this.time;
  }
}

const cacheWith = (ttlSeconds: number, maxEntries: number) =>
  new ManualClockCache({
    BASIC_AUTH_CACHE_TTL_SECONDS: ttlSeconds,
    BASIC_AUTH_CACHE_MAX_ENTRIES: maxEntries,
  } as AuthSettings);

describe('BasicAuthCache', () => {
  it('remembers a success for the same credentials, user and hash', () => {
    const cache = cacheWith(300, 10);
    const key = cache.keyOf('ann@example.com', 'right-password');
    expect(cache.isVerified(key, 1, '$2b$hash')).toBe(false);
    cache.remember(key, 1, '$2b$hash');
    expect(cache.isVerified(key, 1, '$2b$hash')).toBe(true);
    expect(cache.isVerified(cache.keyOf('ann@example.com', 'wrong-password'), 1, '$2b$hash')).toBe(false);
  });

  it('keys by an HMAC that holds neither the password nor a plain hash of it, under a key of its own', () => {
    const cache = cacheWith(300, 10);
    const key = cache.keyOf('ann@example.com', 'right-password');
    expect(key).not.toContain('right-password');
    expect(key).toBe(cache.keyOf('ann@example.com', 'right-password'));
    expect(cacheWith(300, 10).keyOf('ann@example.com', 'right-password')).not.toBe(key);
    // No ambiguity between where the email ends and the password begins.
    expect(cache.keyOf('a', 'b:c')).not.toBe(cache.keyOf('a:b', 'c'));
  });

  it('drops the entry when the stored hash changed (password changed) or the user differs', () => {
    const cache = cacheWith(300, 10);
    const key = cache.keyOf('ann@example.com', 'pw');
    cache.remember(key, 1, 'old-hash');
    expect(cache.isVerified(key, 1, 'new-hash')).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.isVerified(key, 1, 'old-hash')).toBe(false);
    cache.remember(key, 1, 'old-hash');
    expect(cache.isVerified(key, 2, 'old-hash')).toBe(false);
  });

  it('forgets after its lifetime', () => {
    const cache = cacheWith(300, 10);
    const key = cache.keyOf('ann@example.com', 'pw');
    cache.remember(key, 1, 'hash');
    cache.time += 299_999;
    expect(cache.isVerified(key, 1, 'hash')).toBe(true);
    cache.time += 1;
    expect(cache.isVerified(key, 1, 'hash')).toBe(false);
  });

  it('stays within its size, evicting the least recently used entry', () => {
    const cache = cacheWith(300, 2);
    const [a, b, c] = ['a', 'b', 'c'].map((p) => cache.keyOf('ann@example.com', p));
    cache.remember(a, 1, 'h');
    cache.remember(b, 1, 'h');
    expect(cache.isVerified(a, 1, 'h')).toBe(true); // a is now more recent than b
    cache.remember(c, 1, 'h');
    expect(cache.size).toBe(2);
    expect(cache.isVerified(b, 1, 'h')).toBe(false);
    expect(cache.isVerified(a, 1, 'h')).toBe(true);
    expect(cache.isVerified(c, 1, 'h')).toBe(true);
  });

  it('keeps nothing with a lifetime of 0', () => {
    const cache = cacheWith(0, 10);
    const key = cache.keyOf('ann@example.com', 'pw');
    cache.remember(key, 1, 'hash');
    expect(cache.isVerified(key, 1, 'hash')).toBe(false);
  });
});
