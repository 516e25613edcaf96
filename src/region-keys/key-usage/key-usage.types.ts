import type { UtcDay } from './utc-day';

/** One UTC day of a key's usage, as the service answers it and the DTO shows it. */
export interface DailyUsage {
  date: UtcDay;
  requests: number;
}

/** One UTC hour of a key's usage: the hour as YYYY-MM-DDTHH:00:00Z. */
export interface HourlyUsage {
  hour: string;
  requests: number;
}

/** A client of a key, as the service answers it: times as Dates, no user agent as null. */
export interface KeyClient {
  address: string;
  userAgent: string | null;
  firstSeenAt: Date;
  lastSeenAt: Date;
  requests: number;
}
