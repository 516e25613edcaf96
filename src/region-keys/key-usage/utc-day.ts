const DAY_MS = 86_400_000;

/** A UTC calendar day as YYYY-MM-DD, the form PostgreSQL's `date` reads and prints. */
export type UtcDay = string;

export const utcDayOf = (epochMs: number): UtcDay => new Date(epochMs).toISOString().slice(0, 10);

/** The `count` days ending with `last`, oldest first. */
export function utcDaysEndingWith(last: Date, count: number): UtcDay[] {
  const lastStart = Math.floor(last.getTime() / DAY_MS) * DAY_MS;
  return Array.from({ length: count }, (_, i) => utcDayOf(lastStart - (count - 1 - i) * DAY_MS));
}

/** Start and end (exclusive) of the UTC day holding `epochMs`. */
export function utcDayBounds(epochMs: number): { start: number; end: number } {
  const start = Math.floor(epochMs / DAY_MS) * DAY_MS;
  return { start, end: start + DAY_MS };
}
