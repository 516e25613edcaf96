import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

import { Clock } from '../../common/clock';
import { RegionKeysSettings } from '../region-keys.settings';
import { KeyUsageRepository, type UsageCount } from './key-usage.repository';
import { type UtcDay, utcDayBounds, utcDayOf, utcDaysEndingWith } from './utc-day';

/** Days of usage kept, today included; older rows are purged. */
export const USAGE_RETENTION_DAYS = 90;

/**
 * Pending (key, day) counts one instance holds at most. Only keys that authenticated reach
 * the counter, so an unknown key can never grow it; the bound matters only while the
 * database stays unreachable for long (one entry per key and day). Past it, counts of new
 * (key, day) pairs are dropped, with a warning, rather than flushed early: writes stay at
 * most one a minute whatever happens.
 */
export const MAX_PENDING_COUNTS = 100_000;

/**
 * Counts authenticated requests per key and UTC day in memory, and adds them to the database
 * in one statement per interval (API_KEY_USAGE_FLUSH_INTERVAL_MS, a minute by default) and
 * once more on shutdown. Nothing is written per request. A flush that fails keeps its counts
 * for the next one.
 */
@Injectable()
export class KeyUsageCounter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('KeyUsage');
  /** UTC day → key id → requests not yet written. */
  private pending = new Map<UtcDay, Map<string, number>>();
  private size = 0;
  private dropped = 0;
  // The current day, computed once per day rather than per request.
  private day: UtcDay = '';
  private dayStart = 0;
  private dayEnd = 0;
  private timer?: NodeJS.Timeout;
  // Flushes run one after another: the timer's and the shutdown's never overlap.
  private queue: Promise<void> = Promise.resolve();
  private purgedOn: UtcDay | null = null;

  constructor(
    private readonly repository: KeyUsageRepository,
    private readonly clock: Clock,
    private readonly settings: RegionKeysSettings,
  ) {}

  /** The hot path: one request authenticated with this key. */
  count(apiKeyId: string): void {
    const now = this.clock.now().getTime();
    if (now >= this.dayEnd || now < this.dayStart) {
      ({ start: this.dayStart, end: this.dayEnd } = utcDayBounds(now));
      this.day = utcDayOf(now);
    }
    this.add(this.day, apiKeyId, 1);
  }

  /** This instance's counts of a key not yet written, by day. */
  pendingFor(apiKeyId: string): Map<UtcDay, number> {
    const found = new Map<UtcDay, number>();
    for (const [day, keys] of this.pending) {
      const requests = keys.get(apiKeyId);
      if (requests) found.set(day, requests);
    }
    return found;
  }

  /**
   * Writes the pending counts (one statement), and once a UTC day purges the days past
   * retention. Never rejects: a failure is logged and the counts wait for the next flush.
   */
  flush(): Promise<void> {
    return this.enqueue({ purge: true });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), this.settings.API_KEY_USAGE_FLUSH_INTERVAL_MS);
    // A pending flush must never keep a process alive (the CLI, a test); shutdown flushes anyway.
    this.timer.unref();
  }

  /**
   * Nest runs this after the HTTP server has finished its requests and, the database module
   * being global, before the database closes: the last counts still reach it.
   */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.enqueue({ purge: false });
    if (this.size > 0)
      this.logger.warn(`Usage of ${this.size} API key-days could not be written before shutdown and is lost`);
  }

  private enqueue(options: { purge: boolean }): Promise<void> {
    // The timer's flush is not awaited by anyone: whatever happens, it must not reject.
    this.queue = this.queue
      .then(() => this.write(options))
      .catch((err: unknown) => this.logger.warn(`Could not write API key usage: ${messageOf(err)}`));
    return this.queue;
  }

  private add(day: UtcDay, apiKeyId: string, requests: number): void {
    let keys = this.pending.get(day);
    if (!keys) {
      keys = new Map();
      this.pending.set(day, keys);
    }
    const current = keys.get(apiKeyId);
    if (current !== undefined) keys.set(apiKeyId, current + requests);
    else if (this.size < MAX_PENDING_COUNTS) {
      keys.set(apiKeyId, requests);
      this.size++;
    } else this.dropped += requests;
  }

  private async write({ purge }: { purge: boolean }): Promise<void> {
    if (this.size > 0) {
      const batch = this.pending;
      this.pending = new Map();
      this.size = 0;
      const counts: UsageCount[] = [];
      for (const [day, keys] of batch)
        for (const [apiKeyId, requests] of keys) counts.push({ apiKeyId, day, requests });
      try {
        await this.repository.addCounts(counts);
      } catch (err) {
        for (const { apiKeyId, day, requests } of counts) this.add(day, apiKeyId, requests);
        this.logger.warn(
          `Could not write the usage of ${counts.length} API key-days; kept for the next try: ${messageOf(err)}`,
        );
        return;
      }
    }
    if (this.dropped > 0) {
      this.logger.warn(
        `${this.dropped} requests were not counted in API key usage: more than ${MAX_PENDING_COUNTS} key-days were pending`,
      );
      this.dropped = 0;
    }
    if (purge) await this.purge();
  }

  private async purge(): Promise<void> {
    const kept = utcDaysEndingWith(this.clock.now(), USAGE_RETENTION_DAYS);
    const [oldestKept, today] = [kept[0], kept[kept.length - 1]];
    if (this.purgedOn === today) return;
    try {
      await this.repository.deleteBefore(oldestKept);
      this.purgedOn = today;
    } catch (err) {
      this.logger.warn(`Could not purge API key usage older than ${oldestKept}: ${messageOf(err)}`);
    }
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
