import { Injectable } from '@nestjs/common';

import { Clock } from '../../common/clock';
import { NotFoundError, ValidationFailedError } from '../../common/problem';
import { addClientCounts, type ClientCount, clientPair } from './key-clients';
import { KeyUsageRepository } from './key-usage.repository';
import type { DailyUsage, HourlyUsage, KeyClient } from './key-usage.types';
import { CLIENT_RETENTION_DAYS, KeyUsageCounter, MAX_CLIENTS_PER_KEY } from './key-usage-counter';
import { utcDaysEndingWith } from './utc-day';
import { formatUtcHour, utcHoursEndingWith } from './utc-hour';

/** Hours the hourly usage lists: a week, ending with the current one. */
export const USAGE_HOURS = 168;
const DAY_MS = 86_400_000;

/** Revoked keys are found too: their usage is what shows that nothing still used them. */
export class UsageKeyNotFoundError extends NotFoundError {
  constructor() {
    super('No API key with this id exists in your region.');
  }
}

@Injectable()
export class KeyUsageService {
  constructor(
    private readonly repository: KeyUsageRepository,
    private readonly counter: KeyUsageCounter,
    private readonly clock: Clock,
  ) {}

  /**
   * A key's requests on each of the last `days` UTC days (today included), oldest first,
   * every day listed: what all instances have written, plus what this instance has counted
   * and not yet written. Other instances' latest counts show after their next flush.
   */
  async dailyUsage(regionId: string, apiKeyId: string, days: number): Promise<DailyUsage[]> {
    await this.requireKey(regionId, apiKeyId);
    const window = utcDaysEndingWith(this.clock.now(), days);
    const stored = await this.repository.listDaily(apiKeyId, window[0], window[window.length - 1]);
    const pending = this.counter.pendingFor(apiKeyId);
    return window.map((date) => ({ date, requests: (stored.get(date) ?? 0) + (pending.get(date) ?? 0) }));
  }

  /** As dailyUsage, by UTC hour: the last 168, the current one included. */
  async hourlyUsage(regionId: string, apiKeyId: string): Promise<HourlyUsage[]> {
    await this.requireKey(regionId, apiKeyId);
    const window = utcHoursEndingWith(this.clock.now(), USAGE_HOURS);
    const stored = await this.repository.listHourly(apiKeyId, window[0], window[window.length - 1]);
    const pending = this.counter.pendingHourlyFor(apiKeyId);
    return window.map((hour) => ({
      hour: formatUtcHour(hour),
      requests: (stored.get(hour) ?? 0) + (pending.get(hour) ?? 0),
    }));
  }

  /**
   * The clients (address and user agent) that used a key in the last 30 days, most recent
   * first, at most 100: what all instances have written, with this instance's own not yet
   * written added in.
   */
  async clients(regionId: string, apiKeyId: string): Promise<KeyClient[]> {
    await this.requireKey(regionId, apiKeyId);
    const since = this.clock.now().getTime() - CLIENT_RETENTION_DAYS * DAY_MS;
    const pending = this.counter.pendingClientsFor(apiKeyId);
    const stored = await this.repository.listClients(apiKeyId, since, MAX_CLIENTS_PER_KEY, pending);
    const merged = new Map<string, ClientCount>(stored.map((client) => [clientPair(client), client]));
    for (const client of pending) {
      const found = merged.get(clientPair(client));
      if (found) addClientCounts(found, client);
      else merged.set(clientPair(client), client);
    }
    return [...merged.values()]
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt || b.requests - a.requests)
      .slice(0, MAX_CLIENTS_PER_KEY)
      .map(({ address, userAgent, firstSeenAt, lastSeenAt, requests }) => ({
        address,
        userAgent: userAgent === '' ? null : userAgent,
        firstSeenAt: new Date(firstSeenAt),
        lastSeenAt: new Date(lastSeenAt),
        requests,
      }));
  }

  private async requireKey(regionId: string, apiKeyId: string): Promise<void> {
    if (!(await this.repository.keyExistsInRegion(apiKeyId, regionId))) throw new UsageKeyNotFoundError();
  }
}

/** `days` counts days: with hours it would be a second, contradicting window. */
export const daysWithHours = () =>
  new ValidationFailedError([
    { field: 'days', message: 'days applies only to granularity=day; leave it out with hour' },
  ]);
