/** Which limit refused a request (`api_key`: a region API key's own rate limit, any key). */
export type RateLimitName = 'login' | 'signup' | 'api_key' | 'leak_report';

/**
 * What became of an active region API key reported as leaked: `revoked` at once, or `flagged`
 * (the region's last managing key, which the last-key rule keeps: it gets leakReportedAt).
 */
export const LEAKED_KEY_OUTCOMES = ['revoked', 'flagged'] as const;
export type LeakedKeyOutcome = (typeof LEAKED_KEY_OUTCOMES)[number];

/** How a sign-in with email and password was made. */
export type SignInMethod = 'token' | 'basic';

/**
 * What became of a presented region API key: `missing` (no X-API-Key), `malformed` (not a
 * key this service could have issued; turned away without the database), `unknown` (no
 * active key has it: never issued, revoked, or past its revokesAt or expiresAt; telling these apart would
 * cost every refused key a second query), `wrong_environment` (a sandbox key sent to live, or a
 * live key to a sandbox; no database either), `address_not_allowed` (a valid key sent from an
 * address outside its allowlist: refused like a failed authentication), `error` (the lookup
 * failed, e.g. the database).
 */
export const API_KEY_OUTCOMES = [
  'success',
  'missing',
  'malformed',
  'unknown',
  'wrong_environment',
  'address_not_allowed',
  'error',
] as const;
export type ApiKeyOutcome = (typeof API_KEY_OUTCOMES)[number];

/**
 * The security events features count, where they happen. Features depend on this class
 * only (it is also the injection token), not on a metrics library; with metrics off it is
 * a no-op.
 */
export abstract class SecurityCounters {
  abstract rateLimited(limit: RateLimitName): void;
  abstract signInFailed(method: SignInMethod): void;
  abstract apiKeyAuthenticated(outcome: ApiKeyOutcome): void;
  abstract leakedKeyReported(outcome: LeakedKeyOutcome): void;
}

export class NoSecurityCounters extends SecurityCounters {
  rateLimited(): void {}
  signInFailed(): void {}
  apiKeyAuthenticated(): void {}
  leakedKeyReported(): void {}
}
