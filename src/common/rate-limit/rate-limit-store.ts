import type { ThrottlerStorage } from '@nestjs/throttler';

// The library does not export its record type by name.
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** A key's current window, read without counting a hit. `timeToExpire` is in seconds. */
export interface RateLimitWindow {
  totalHits: number;
  timeToExpire: number;
}

/**
 * The counters behind every rate limit: @nestjs/throttler's storage contract (fixed windows:
 * the first hit opens a window of `ttl` ms; the hit past `limit` blocks the key for
 * `blockDuration` ms, and hits while blocked are not counted), plus `peek`, which the
 * failed-login limit needs: it must refuse a blocked client before checking a password,
 * but count only the attempts that fail.
 */
export interface RateLimitStore extends ThrottlerStorage {
  peek(key: string, throttlerName: string): Promise<RateLimitWindow>;
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
