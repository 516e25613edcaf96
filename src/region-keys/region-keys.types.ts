import type { KeyRateLimit } from './key-rate-limit';
import { type Permission, PERMISSIONS } from './permissions';
import type { EventActor, RegionEventRecord } from './region-events.repository';
import type { ApiKeyRecord, RegionRecord } from './region-keys.repository';

/*
 * The region keys' vocabulary: what the service takes and answers with. The controller's
 * DTOs are made from these, so they live beside the service rather than in it.
 */

export interface RegionWithKeys {
  region: RegionRecord;
  /** Active keys, oldest first. */
  apiKeys: ApiKeyRecord[];
}

/** Who is calling, once an API key has been accepted. */
export interface RegionPrincipal {
  regionId: string;
  apiKeyId: string;
  /** The accepted key's own rate limit; null: the region default (REGION_KEY_RATE_LIMIT). */
  rateLimit: KeyRateLimit | null;
  /** The accepted key's preview, to name it as the actor of the changes it makes. */
  tokenPreview: string;
  /** What the accepted key may do. */
  permissions: Permission[];
  /**
   * The caller's region with its active keys, read by the same query that accepted the
   * key (as of that moment, for this request only: nothing outlives the request).
   */
  region: RegionWithKeys;
}

/**
 * What a new key may do and from where. Absent permissions: those of whoever grants them
 * (an operator grants all). Absent allowedCidrs: any address on create, the old key's on
 * a roll; CIDRs come validated and in canonical form (see parseCidr).
 */
export interface KeyGrantRequest {
  description?: string | null;
  permissions?: Permission[];
  allowedCidrs?: string[] | null;
  /** An RFC 3339 date-time (validated as such, not yet against the clock); null: never. */
  expiresAt?: string | null;
  /** Absent: the caller's own on create, the old key's on a roll; null: the region default. */
  rateLimit?: KeyRateLimit | null;
}

/**
 * What the key making a change holds, and so the most it may grant: its permissions, and its
 * rate limit (null: the region default). An operator holds every permission and every rate.
 */
export interface Held {
  permissions: readonly Permission[];
  /** Absent: any rate (an operator). */
  rateLimit?: KeyRateLimit | null;
}

export const OPERATOR_HOLDS: Held = { permissions: PERMISSIONS };

/** A PATCH of a key: absent fields stay, null clears (permissions cannot be null). */
export type KeyPatch = KeyGrantRequest;

export type { KeyConditions } from './key-etag';

/** A key just created: the row, and the secret that exists only in this one response. */
export interface IssuedApiKey {
  apiKey: ApiKeyRecord;
  key: string;
}

/** A roll: the new key, and the old key with the time it stops. */
export interface RolledApiKey extends IssuedApiKey {
  replaces: { id: string; revokesAt: Date };
}

/**
 * Who asks for a change and from where, recorded with it in the region's events. Plain
 * values: the controller reads them from the request, the service never sees the request.
 */
export interface ChangeOrigin {
  actor: EventActor;
  clientAddress: string | null;
  requestId: string | null;
}

/** Changes made by an operator (CLI, first start): no key, no client address, no request. */
export const OPERATOR: ChangeOrigin = { actor: { type: 'operator' }, clientAddress: null, requestId: null };

export interface RegionEventPage {
  events: RegionEventRecord[];
  /** The cursor of the next page; null on the last one. */
  next: string | null;
}

/** What a leak report did to one active key: revoked, or flagged (the last-key rule keeps it). */
export interface LeakReportOutcome {
  keyId: string;
  regionId: string;
  outcome: 'revoked' | 'flagged';
}
