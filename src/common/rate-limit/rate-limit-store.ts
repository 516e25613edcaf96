import type { ThrottlerStorage } from '@nestjs/throttler';

// The library does not export its record type by name.
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A key's current window, read without counting a hit. `timeToExpire` is in seconds. */
export interface RateLimitWindow {
  totalHits: number;
  timeToExpire: number;
}

/**
 * One set of counters: @nestjs/throttler's storage contract (fixed windows: the first hit
 * opens a window of `ttl` ms; the hit past `limit` blocks the key for `blockDuration` ms,
 * and hits while blocked are not counted), plus what the failed-login limit needs:
 * `release`, as an attempt takes a hit before its password is checked and one that
 * succeeds gives it back, so that only failures stay counted; and `peek`, to refuse a
 * blocked client without taking a hit.
 */
export interface Counters extends ThrottlerStorage {
  peek(key: string, throttlerName: string): Promise<RateLimitWindow>;
  /** Uncounts one hit of the key's current window, if it has any; the window's end stays. */
  release(key: string, throttlerName: string): Promise<void>;
}

/** A hit, and the way to give back that very hit, to the counters that counted it. */
export interface RateLimitSlot extends ThrottlerStorageRecord {
  /** Never rejects: a hit that cannot be given back stays counted. */
  release(): Promise<void>;
}

/**
 * Where hits are counted now: `memory`, in this process (no REDIS_URL); `redis`, shared by
 * every instance; `redis-away`, in this process because Redis does not answer.
 */
export type CountingMode = 'memory' | 'redis' | 'redis-away';

/** The counters behind every rate limit (RATE_LIMIT_STORE). */
export interface RateLimitStore extends Counters {
  take(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<RateLimitSlot>;
  readonly counting: CountingMode;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

export const toSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

export function storageRecord(totalHits: number, msLeft: number, limit: number): ThrottlerStorageRecord {
  const isBlocked = totalHits > limit;
  return {
    totalHits,
    timeToExpire: toSeconds(msLeft),
    isBlocked,
    timeToBlockExpire: isBlocked ? toSeconds(msLeft) : 0,
  };
}

/** `counters.increment`, with the release of that hit in the same counters. */
export async function takeFrom(
  counters: Counters,
  ...[key, ttl, limit, blockDuration, throttlerName]: Parameters<RateLimitStore['take']>
): Promise<RateLimitSlot> {
  const record = await counters.increment(key, ttl, limit, blockDuration, throttlerName);
  return { ...record, release: () => counters.release(key, throttlerName) };
}
