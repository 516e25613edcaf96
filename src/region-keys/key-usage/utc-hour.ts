const HOUR_MS = 3_600_000;

/** A UTC hour as its start in epoch milliseconds. */
export type UtcHour = number;

export const utcHourOf = (epochMs: number): UtcHour => Math.floor(epochMs / HOUR_MS) * HOUR_MS;

/** The hour as the API shows it: YYYY-MM-DDTHH:00:00Z. */
export const formatUtcHour = (hour: UtcHour): string => `${new Date(hour).toISOString().slice(0, 13)}:00:00Z`;

/** The `count` hours ending with the one holding `last`, oldest first. */
export function utcHoursEndingWith(last: Date, count: number): UtcHour[] {
  const lastStart = utcHourOf(last.getTime());
  return Array.from({ length: count }, (_, i) => lastStart - (count - 1 - i) * HOUR_MS);
}
