import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

import { Clock } from '../../common/clock';
import { RegionKeysSettings } from '../region-keys.settings';
import { addClientCounts, clientAddressOf, type ClientCount, clientPair, userAgentOf } from './key-clients';
import { type HourlyCount, KeyUsageRepository, type UsageCount } from './key-usage.repository';
import { type UtcDay, utcDayBounds, utcDayOf, utcDaysEndingWith } from './utc-day';
import { type UtcHour, utcHourOf } from './utc-hour';

/** Days of usage kept, today included; older rows are purged. */
export const USAGE_RETENTION_DAYS = 90;
/** Days of hourly usage kept before today: the 168 hours shown always are. */
export const HOURLY_USAGE_RETENTION_DAYS = 7;
/** Days a client is listed after its last request; older ones are purged. */
export const CLIENT_RETENTION_DAYS = 30;
/** Clients listed, and kept, per key: the most recent. */
export const MAX_CLIENTS_PER_KEY = 100;

/**
 * Pending (key, hour) counts one instance holds at most. Only keys that authenticated reach
 * the counter, so an unknown key can never grow it; the bound matters only while the
 * database stays unreachable for long (one entry per key and hour). Past it, counts of new
 * (key, hour) pairs are dropped, with a warning, rather than flushed early: writes stay at
 * most one a minute whatever happens.
 */
export const MAX_PENDING_COUNTS = 100_000;
/**
 * Pending clients one instance holds at most, all keys together. Each key holds at most
 * MAX_CLIENTS_PER_KEY new clients between two flushes, so a client that sends a new user
 * agent with each request cannot grow memory; requests of clients past either bound are
 * still counted in usage, not in the key's clients.
 */
export const MAX_PENDING_CLIENTS = 100_000;

const DAY_MS = 86_400_000;

/**
 * Counts authenticated requests per key and UTC hour, and the clients (address and user
 * agent) that made them, in memory, and adds them to the database in one statement per
 * interval (API_KEY_USAGE_FLUSH_INTERVAL_MS, a minute by default) and once more on shutdown;
 * the daily counts are the hours' sums. Nothing is written per request. A flush that fails
 * keeps its counts for the next one.
 */
@Injectable()
export class KeyUsageCounter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('KeyUsage');
  /** UTC hour → key id → requests not yet written. */
  private pending = new Map<UtcHour, Map<string, number>>();
  private size = 0;
  private dropped = 0;
  /** Key id → address and user agent → the client's requests not yet written. */
  private clients = new Map<string, Map<string, ClientCount>>();
  private clientCount = 0;
  private droppedClients = 0;
  // The current hour, computed once per hour rather than per request.
  private hour: UtcHour = 0;
  private hourEnd = 0;
  private timer?: NodeJS.Timeout;
  // Flushes run one after another: the timer's and the shutdown's never overlap.
  private queue: Promise<void> = Promise.resolve();
  private purgedOn: UtcDay | null = null;

  constructor(
    private readonly repository: KeyUsageRepository,
    private readonly clock: Clock,
    private readonly settings: RegionKeysSettings,
  ) {}

  /** The hot path: one request authenticated with this key, from this address and user agent. */
  count(apiKeyId: string, address: string, userAgent?: string | string[]): void {
    const now = this.clock.now().getTime();
    if (now >= this.hourEnd || now < this.hour) {
      this.hour = utcHourOf(now);
      this.hourEnd = this.hour + 3_600_000;
    }
    this.add(this.hour, apiKeyId, 1);
    // The proxy settings have already made it one address; this gives it one spelling.
    const seen = { address: clientAddressOf(address), userAgent: userAgentOf(userAgent) };
    this.addClient({ apiKeyId, ...seen, firstSeenAt: now, lastSeenAt: now, requests: 1 });
  }

  /** This instance's counts of a key not yet written, by day. */
  pendingFor(apiKeyId: string): Map<UtcDay, number> {
    const found = new Map<UtcDay, number>();
    for (const [hour, requests] of this.pendingHourlyFor(apiKeyId)) {
      const day = utcDayOf(hour);
      found.set(day, (found.get(day) ?? 0) + requests);
    }
    return found;
  }

  /** This instance's counts of a key not yet written, by hour. */
  pendingHourlyFor(apiKeyId: string): Map<UtcHour, number> {
    const found = new Map<UtcHour, number>();
    for (const [hour, keys] of this.pending) {
      const requests = keys.get(apiKeyId);
      if (requests) found.set(hour, requests);
    }
    return found;
  }

  /** This instance's clients of a key not yet written. */
  pendingClientsFor(apiKeyId: string): ClientCount[] {
    return [...(this.clients.get(apiKeyId)?.values() ?? [])].map((client) => ({ ...client }));
  }

  /**
   * Writes the pending counts (one statement), and once a UTC day purges what is past
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
      this.logger.warn(`Usage of ${this.size} API key-hours could not be written before shutdown and is lost`);
  }

  private enqueue(options: { purge: boolean }): Promise<void> {
    // The timer's flush is not awaited by anyone: whatever happens, it must not reject.
    this.queue = this.queue
      .then(() => this.write(options))
      .catch((err: unknown) => this.logger.warn(`Could not write API key usage: ${messageOf(err)}`));
    return this.queue;
  }

  private add(hour: UtcHour, apiKeyId: string, requests: number): void {
    let keys = this.pending.get(hour);
    if (!keys) {
      keys = new Map();
      this.pending.set(hour, keys);
    }
    const current = keys.get(apiKeyId);
    if (current !== undefined) keys.set(apiKeyId, current + requests);
    else if (this.size < MAX_PENDING_COUNTS) {
      keys.set(apiKeyId, requests);
      this.size++;
    } else this.dropped += requests;
  }

  private addClient(client: ClientCount): void {
    let pairs = this.clients.get(client.apiKeyId);
    if (!pairs) {
      pairs = new Map();
      this.clients.set(client.apiKeyId, pairs);
    }
    const pair = clientPair(client);
    const current = pairs.get(pair);
    if (current) addClientCounts(current, client);
    else if (pairs.size < MAX_CLIENTS_PER_KEY && this.clientCount < MAX_PENDING_CLIENTS) {
      pairs.set(pair, client);
      this.clientCount++;
    } else this.droppedClients += client.requests;
  }

  private async write({ purge }: { purge: boolean }): Promise<void> {
    if (this.size > 0 || this.clientCount > 0) {
      const [batch, clients] = [this.pending, this.clients];
      this.pending = new Map();
      this.clients = new Map();
      this.size = 0;
      this.clientCount = 0;
      const hourly: HourlyCount[] = [];
      for (const [hour, keys] of batch)
        for (const [apiKeyId, requests] of keys) hourly.push({ apiKeyId, hour, requests });
      const clientCounts = [...clients.values()].flatMap((pairs) => [...pairs.values()]);
      try {
        await this.repository.addCounts(dailyOf(hourly), hourly, clientCounts);
      } catch (err) {
        for (const { apiKeyId, hour, requests } of hourly) this.add(hour, apiKeyId, requests);
        for (const client of clientCounts) this.addClient(client);
        this.logger.warn(
          `Could not write the usage of ${hourly.length} API key-hours; kept for the next try: ${messageOf(err)}`,
        );
        return;
      }
      if (clients.size > 0) await this.keepRecentClients([...clients.keys()]);
    }
    if (this.dropped > 0) {
      this.logger.warn(
        `${this.dropped} requests were not counted in API key usage: more than ${MAX_PENDING_COUNTS} key-hours were pending`,
      );
      this.dropped = 0;
    }
    if (this.droppedClients > 0) {
      this.logger.warn(
        `${this.droppedClients} requests were not counted in API key clients: more than ${MAX_CLIENTS_PER_KEY} new ` +
          `clients of one key, or ${MAX_PENDING_CLIENTS} in all, were pending`,
      );
      this.droppedClients = 0;
    }
    if (purge) await this.purge();
  }

  /** Only the most recent clients of each key are kept, so a key's rows stay few whatever its clients send. */
  private async keepRecentClients(apiKeyIds: string[]): Promise<void> {
    try {
      await this.repository.keepRecentClients(apiKeyIds, MAX_CLIENTS_PER_KEY);
    } catch (err) {
      this.logger.warn(`Could not remove the older clients of ${apiKeyIds.length} API keys: ${messageOf(err)}`);
    }
  }

  private async purge(): Promise<void> {
    const now = this.clock.now();
    const kept = utcDaysEndingWith(now, USAGE_RETENTION_DAYS);
    const [oldestKept, today] = [kept[0], kept[kept.length - 1]];
    if (this.purgedOn === today) return;
    const todayStart = utcDayBounds(now.getTime()).start;
    try {
      await this.repository.deleteBefore(oldestKept);
      await this.repository.deleteHoursBefore(todayStart - HOURLY_USAGE_RETENTION_DAYS * DAY_MS);
      await this.repository.deleteClientsSeenBefore(now.getTime() - CLIENT_RETENTION_DAYS * DAY_MS);
      this.purgedOn = today;
    } catch (err) {
      this.logger.warn(`Could not purge API key usage older than ${oldestKept}: ${messageOf(err)}`);
    }
  }
}

/** The hours' counts summed by UTC day. */
function dailyOf(hourly: HourlyCount[]): UsageCount[] {
  const byKeyDay = new Map<string, UsageCount>();
  for (const { apiKeyId, hour, requests } of hourly) {
    const day = utcDayOf(hour);
    const id = `${apiKeyId} ${day}`;
    const found = byKeyDay.get(id);
    if (found) found.requests += requests;
    else byKeyDay.set(id, { apiKeyId, day, requests });
  }
  return [...byKeyDay.values()];
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
