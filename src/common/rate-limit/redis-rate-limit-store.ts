import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';

import { MemoryRateLimitStore } from './memory-rate-limit-store';
import {
  type Counters,
  type CountingMode,
  type RateLimitSlot,
  type RateLimitStore,
  type RateLimitWindow,
  takeFrom,
  type ThrottlerStorageRecord,
} from './rate-limit-store';
import { RedisCounters } from './redis-counters';

/** How often, while Redis is away but the client is connected, one PING asks whether it answers again. */
const PROBE_INTERVAL_MS = 1000;

/**
 * Counters shared by every instance through Redis (REDIS_URL), counted in this process
 * while Redis is away. Redis holds counters, not truth: refusing sign-ins and sign-ups
 * because it is down would be worse than N instances each allowing the limit. So a hit
 * Redis does not take (refused, reset, or silent past the command timeout) is counted
 * here, and so is every hit after it, without trying Redis, until the client has
 * reconnected and Redis answers; then counting is shared again. One warning says when
 * counting falls back, one info line when it is shared again.
 */
export class RedisRateLimitStore implements RateLimitStore, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly shared: RedisCounters;
  private readonly local = new MemoryRateLimitStore();
  // Away until Redis first answers: an instance starts whether or not it does.
  private away = true;
  private warned = false;
  private closing = false;
  private probes?: NodeJS.Timeout;
  private probing = false;
  private firstAnswer?: () => void;

  constructor(
    url: string,
    keyPrefix: string,
    private readonly commandTimeoutMs = 1000,
  ) {
    this.shared = new RedisCounters(url, keyPrefix, commandTimeoutMs, {
      ready: () => this.resume(),
      lost: (reason) => this.fallBack(reason),
    });
  }

  get counting(): CountingMode {
    return this.away ? 'redis-away' : 'redis';
  }

  /** Gives Redis up to the command timeout to answer before the first request; then starts without it. */
  async onModuleInit(): Promise<void> {
    if (!this.away) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.firstAnswer = resolve;
      timer = setTimeout(resolve, this.commandTimeoutMs);
    });
    clearTimeout(timer);
    this.firstAnswer = undefined;
    if (this.away) this.fallBack(`no answer within ${this.commandTimeoutMs} ms`);
  }

  increment(...hit: Parameters<RateLimitStore['increment']>): Promise<ThrottlerStorageRecord> {
    return this.use((counters) => counters.increment(...hit));
  }

  take(...hit: Parameters<RateLimitStore['take']>): Promise<RateLimitSlot> {
    return this.use(async (counters) => {
      const slot = await takeFrom(counters, ...hit);
      if (counters === this.local) return slot;
      // Given back where it was counted. If Redis fails now, the hit stays counted there,
      // as a failure: the safe side.
      return { ...slot, release: () => slot.release().catch((err: Error) => this.fallBack(err.message)) };
    });
  }

  peek(key: string, throttlerName: string): Promise<RateLimitWindow> {
    return this.use((counters) => counters.peek(key, throttlerName));
  }

  release(key: string, throttlerName: string): Promise<void> {
    return this.use((counters) => counters.release(key, throttlerName));
  }

  onApplicationShutdown(): void {
    this.closing = true;
    clearInterval(this.probes);
    // Not quit(): it waits for Redis's reply, which a silent Redis never sends. Every
    // command has had its answer by now (requests are finished), so nothing is lost.
    this.shared.disconnect();
  }

  /** In Redis while it answers; else, and for a command it fails mid-way, here. */
  private async use<T>(command: (counters: Counters) => Promise<T>): Promise<T> {
    if (!this.away && this.shared.connected) {
      try {
        return await command(this.shared);
      } catch (err) {
        this.fallBack((err as Error).message);
      }
    }
    return command(this.local);
  }

  private fallBack(reason: string): void {
    this.firstAnswer?.();
    // Said once an outage: not again for each reconnect attempt or failed command.
    if (this.closing || (this.away && this.warned)) return;
    this.away = true;
    this.warned = true;
    this.logger.warn(
      `Redis does not answer (${reason}): each instance counts the rate limits on its own until it does`,
    );
    this.probes ??= setInterval(() => this.probe(), PROBE_INTERVAL_MS).unref();
  }

  // The client's reconnect and ready check end most outages. A Redis that went silent, or
  // failed a command, while the connection stayed up sends no such event: a PING asks.
  private probe(): void {
    if (this.probing || !this.shared.connected) return;
    this.probing = true;
    this.shared
      .ping()
      .then(
        () => this.resume(),
        () => undefined,
      )
      .finally(() => (this.probing = false));
  }

  private resume(): void {
    this.firstAnswer?.();
    if (!this.away || this.closing) return;
    this.away = false;
    clearInterval(this.probes);
    this.probes = undefined;
    if (this.warned)
      this.logger.log('Redis answers again: the rate limits are counted there, shared by every instance');
    this.warned = false;
  }
}
