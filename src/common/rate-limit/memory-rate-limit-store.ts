import {
  RateLimitSlot,
  RateLimitStore,
  RateLimitWindow,
  storageRecord,
  takeFrom,
  ThrottlerStorageRecord,
  toSeconds,
} from './rate-limit-store';

interface Counter {
  hits: number;
  resetAt: number;
}

/**
 * Counters in this process only: right for one instance (no REDIS_URL), and what each
 * instance falls back to while Redis is away. The same fixed window as the Redis
 * counters, so both behave alike. Bounded: when full, expired counters
 * go first, then the oldest, so a flood of distinct keys cannot exhaust memory.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly maxKeys = 100_000) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const id = `${throttlerName}:${key}`;
    let counter = this.live(id, now);
    if (!counter) {
      this.makeRoom(now);
      counter = { hits: 0, resetAt: now + ttl };
      this.counters.set(id, counter);
    }
    if (counter.hits <= limit) {
      counter.hits += 1;
      if (counter.hits > limit) counter.resetAt = now + blockDuration;
    }
    return storageRecord(counter.hits, counter.resetAt - now, limit);
  }

  async peek(key: string, throttlerName: string): Promise<RateLimitWindow> {
    const now = Date.now();
    const counter = this.live(`${throttlerName}:${key}`, now);
    return counter
      ? { totalHits: counter.hits, timeToExpire: toSeconds(counter.resetAt - now) }
      : { totalHits: 0, timeToExpire: 0 };
  }

  async release(key: string, throttlerName: string): Promise<void> {
    const counter = this.live(`${throttlerName}:${key}`, Date.now());
    if (counter && counter.hits > 0) counter.hits -= 1;
  }

  take(...hit: Parameters<RateLimitStore['take']>): Promise<RateLimitSlot> {
    return takeFrom(this, ...hit);
  }

  readonly counting = 'memory';

  private live(id: string, now: number): Counter | undefined {
    const counter = this.counters.get(id);
    if (counter && counter.resetAt <= now) {
      this.counters.delete(id);
      return undefined;
    }
    return counter;
  }

  private makeRoom(now: number): void {
    if (this.counters.size < this.maxKeys) return;
    for (const [id, counter] of this.counters) {
      if (counter.resetAt <= now) this.counters.delete(id);
    }
    if (this.counters.size >= this.maxKeys) {
      const oldest = this.counters.keys().next().value;
      if (oldest !== undefined) this.counters.delete(oldest);
    }
  }
}
