/**
 * One limit as a client sees it, for the response headers: the IETF pair of
 * draft-ietf-httpapi-ratelimit-headers (structured fields), and the older X-RateLimit-*
 * that clients already read.
 */
export interface RateLimitPolicy {
  /** The policy's name, which ties RateLimit to its RateLimit-Policy. */
  name: string;
  /** Quota: requests (or failed attempts, or uploads in progress) allowed. */
  limit: number;
  /** The window the quota is for, in seconds; none for a limit on concurrent requests. */
  windowSeconds?: number;
  quotaUnit?: 'requests' | 'concurrent-requests';
}

export interface RateLimitState {
  remaining: number;
  /** Seconds until the quota is available again. */
  reset: number;
}

/** `RateLimit-Policy: "signup";q=20;w=60`. */
export function rateLimitPolicyField({ name, limit, windowSeconds, quotaUnit }: RateLimitPolicy): string {
  const window = windowSeconds === undefined ? '' : `;w=${windowSeconds}`;
  const unit = quotaUnit === undefined || quotaUnit === 'requests' ? '' : `;qu="${quotaUnit}"`;
  return `"${name}";q=${limit}${window}${unit}`;
}

export function rateLimitHeaders(
  policy: RateLimitPolicy,
  { remaining, reset }: RateLimitState,
): Record<string, string> {
  const left = Math.max(0, remaining);
  const seconds = Math.max(0, reset);
  return {
    'RateLimit-Policy': rateLimitPolicyField(policy),
    RateLimit: `"${policy.name}";r=${left};t=${seconds}`,
    'X-RateLimit-Limit': String(policy.limit),
    'X-RateLimit-Remaining': String(left),
    'X-RateLimit-Reset': String(seconds),
  };
}
