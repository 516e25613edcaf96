/** One limit as the response headers show it: draft-ietf-httpapi-ratelimit-headers, and the older X-RateLimit-*. */
export interface RateLimitPolicy {
  /** Ties RateLimit to its RateLimit-Policy. */
  name: string;
  /** Quota: requests (or failed attempts, or uploads in progress) allowed. */
  limit: number;
  /** The window the quota is for, in seconds; none for a limit on concurrent requests. */
  windowSeconds?: number;
  quotaUnit?: 'requests' | 'concurrent-requests';
}

/** What is left: `reset` is in seconds until the quota is available again. */
export type RateLimitState = { remaining: number; reset: number };

/** `RateLimit-Policy: "signup";q=20;w=60`. */
export function rateLimitPolicyField({ name, limit, windowSeconds, quotaUnit }: RateLimitPolicy): string {
  const window = windowSeconds === undefined ? '' : `;w=${windowSeconds}`;
  const unit = quotaUnit === undefined || quotaUnit === 'requests' ? '' : `;qu="${quotaUnit}"`;
  return `"${name}";q=${limit}${window}${unit}`;
}

export function rateLimitHeaders(policy: RateLimitPolicy, state: RateLimitState): Record<string, string> {
  const [left, seconds] = [Math.max(0, state.remaining), Math.max(0, state.reset)];
  return {
    'RateLimit-Policy': rateLimitPolicyField(policy),
    RateLimit: `"${policy.name}";r=${left};t=${seconds}`,
    'X-RateLimit-Limit': String(policy.limit),
    'X-RateLimit-Remaining': String(left),
    'X-RateLimit-Reset': String(seconds),
  };
}
