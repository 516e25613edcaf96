import type { UtcDay } from './utc-day';

/** One UTC day of a key's usage, as the service answers it and the DTO shows it. */
export interface DailyUsage {
  date: UtcDay;
  requests: number;
}
