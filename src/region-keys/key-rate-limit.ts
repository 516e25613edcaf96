/** A key's own rate limit: at most `requests` requests in each window of `perSeconds` seconds. */
export interface KeyRateLimit {
  requests: number;
  perSeconds: number;
}

export const MAX_RATE_LIMIT_REQUESTS = 100_000;
export const MAX_RATE_LIMIT_PER_SECONDS = 3600;

const RATE_LIMIT_FORM = /^(\d{1,6})\/(\d{1,4})$/;

/** `600/60` as a rate limit; null for anything else, bounds included (the setting's form). */
export function parseRateLimit(value: string): KeyRateLimit | null {
  const [, requests, perSeconds] = RATE_LIMIT_FORM.exec(value) ?? [];
  if (requests === undefined) return null;
  const limit = { requests: Number(requests), perSeconds: Number(perSeconds) };
  const within = (n: number, max: number) => n >= 1 && n <= max;
  return within(limit.requests, MAX_RATE_LIMIT_REQUESTS) && within(limit.perSeconds, MAX_RATE_LIMIT_PER_SECONDS)
    ? limit
    : null;
}

/**
 * Whether `a` lets a key make more requests per second than `b`: requests / perSeconds compared
 * exactly, as integers multiplied across (at most 100000 × 3600), never as rounded floats.
 */
export const fasterThan = (a: KeyRateLimit, b: KeyRateLimit): boolean =>
  a.requests * b.perSeconds > b.requests * a.perSeconds;

export const formatRateLimit = ({ requests, perSeconds }: KeyRateLimit): string =>
  `${requests} requests per ${perSeconds} seconds`;
