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
 * `blockDuration` ms, and hits while blocked are not counted), plus what the failed-login
 * limit needs: `release`, as an attempt takes a hit before its password is checked and
 * one that succeeds gives it back, so that only failures stay counted; and `peek`, to
 * refuse a blocked client without taking a hit.
 */
export interface RateLimitStore extends ThrottlerStorage {
  peek(key: string, throttlerName: string): Promise<RateLimitWindow>;
  /** Uncounts one hit of the key's current window, if it has any; the window's end stays. */
  release(key: string, throttlerName: string): Promise<void>;
  /** For readiness: where the counters live, and whether that answers now (within the command timeout). */
  readonly backend: 'memory' | 'redis';
  isReachable(): Promise<boolean>;
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
