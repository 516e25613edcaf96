import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

import { SecurityCounters } from '../common/metrics';
import { type RateLimitPolicy, RateLimitStore, takeHitHeaders } from '../common/rate-limit';
import type { KeyRateLimit } from './key-rate-limit';
import { tooManyKeyRequests } from './region-keys.errors';
import { RegionKeysSettings } from './region-keys.settings';
import type { RegionPrincipal } from './region-keys.types';

/** The name clients see in RateLimit-Policy and RateLimit for a key's own limit. */
export const API_KEY_POLICY = 'api-key';

/**
 * Counts each request of an accepted key against its rate limit (its own, or the region
 * default): fixed windows in RateLimitStore, shared by every instance through Redis, per
 * instance while Redis is away. The counter is keyed by the key's id alone; each distinct limit
 * has a limiter of its own, made once (limits are few: the keys' own and the default).
 *
 * The counters are the application's one RateLimitStore, found at start in a server only: the
 * operator CLI loads this feature's module and must not connect to Redis for routes it never serves.
 */
@Injectable()
export class KeyRateLimiter implements OnModuleInit {
  private readonly regionDefault: KeyRateLimit;
  private readonly limiters = new Map<string, { policy: RateLimitPolicy; limiter: RateLimiterAbstract }>();
  private store!: RateLimitStore;

  constructor(
    settings: RegionKeysSettings,
    private readonly counters: SecurityCounters,
    private readonly adapterHost: HttpAdapterHost,
    private readonly moduleRef: ModuleRef,
  ) {
    this.regionDefault = settings.regionKeyRateLimit;
  }

  onModuleInit(): void {
    if (this.adapterHost.httpAdapter) this.store = this.moduleRef.get(RateLimitStore, { strict: false });
  }

  /** Takes one request of the caller's key: the RateLimit headers of its answer, or the 429 past the limit. */
  async take(caller: Pick<RegionPrincipal, 'apiKeyId' | 'rateLimit'>): Promise<Record<string, string>> {
    const { policy, limiter } = this.limiterOf(caller.rateLimit ?? this.regionDefault);
    return takeHitHeaders(limiter, caller.apiKeyId, policy, (retryAfter) => {
      this.counters.rateLimited('api_key');
      return tooManyKeyRequests(policy, retryAfter);
    });
  }

  private limiterOf({ requests, perSeconds }: KeyRateLimit) {
    const name = `${API_KEY_POLICY}-${requests}-per-${perSeconds}`;
    let entry = this.limiters.get(name);
    if (!entry) {
      const policy = { name: API_KEY_POLICY, limit: requests, windowSeconds: perSeconds };
      // Counters of another limit under another name: a key whose limit changes starts a new window.
      // Not blocked past the window: a key makes its `requests` again as soon as a window starts.
      entry = { policy, limiter: this.store.limiter({ ...policy, name }, { blockWhenSpent: false }) };
      this.limiters.set(name, entry);
    }
    return entry;
  }
}
