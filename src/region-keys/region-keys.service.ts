import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { Clock } from '../common/clock';
import { ValidationFailedError } from '../common/problem';
import { AppConfig } from '../config';
import { type Transaction, UnitOfWork } from '../database';
import { admitsSomeAddress, allowlistOf, allowlistWithin } from './address-allowlist';
import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from './api-key-codec';
import { Region } from './entities/region.entity';
import { decodeEventCursor, encodeEventCursor, invalidEventCursor } from './event-cursor';
import { failedKeyCondition } from './key-etag';
import { fasterThan, type KeyRateLimit } from './key-rate-limit';
import { normalisePermissions, type Permission, PERMISSIONS, SELF_MANAGING } from './permissions';
import {
  type EventApiKey,
  type KeyChanges,
  RegionEventsRepository,
  type RegionEventType,
} from './region-events.repository';
import {
  AddressNotAllowedError,
  ApiKeyAlreadyRolledError,
  ApiKeyChangedError,
  ApiKeyLimitError,
  ApiKeyNotFoundError,
  LastApiKeyError,
  rateLimitAboveCaller,
  RegionNotFoundError,
  ungrantablePermissions,
  unkeepablePermissions,
  unnarrowingPermissions,
  unwidenableKey,
} from './region-keys.errors';
import {
  type ApiKeyChanges,
  type ApiKeyRecord,
  type KeyWithRegion,
  RegionKeysRepository,
} from './region-keys.repository';
import { RegionKeysSettings } from './region-keys.settings';
import {
  type ChangeOrigin,
  type Held,
  type IssuedApiKey,
  type KeyConditions,
  type KeyGrantRequest,
  type KeyPatch,
  type LeakReportOutcome,
  OPERATOR,
  OPERATOR_HOLDS,
  type RegionEventPage,
  type RegionPrincipal,
  type RolledApiKey,
} from './region-keys.types';

@Injectable()
export class RegionKeysService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly repository: RegionKeysRepository,
    private readonly events: RegionEventsRepository,
    private readonly config: AppConfig,
    private readonly settings: RegionKeysSettings,
    private readonly clock: Clock,
  ) {}

  /**
   * Resolves a presented key to its region, or null. Malformed keys, and keys of the other
   * environment (live or sandbox), never reach the
   * database. One query finds the key and reads its region with the region's keys. No
   * result is cached, so a revoked key stops working at once everywhere.
   */
  async authenticate(presentedKey: string, clientAddress: string): Promise<RegionPrincipal | null> {
    if (!isWellFormedApiKey(presentedKey, this.config.API_ENVIRONMENT)) return null;
    const now = this.clock.now();
    const found = await this.repository.findActiveKeyWithRegion(hashApiKey(presentedKey), now);
    if (!found) return null;
    // Before lastUsedAt moves: a refused request is no use of the key.
    if (found.allowedCidrs && !allowlistOf(found.allowedCidrs)(clientAddress)) throw new AddressNotAllowedError();
    await this.recordUse(found, now);
    const { apiKeyId, tokenPreview, permissions, rateLimit, region, apiKeys } = found;
    return { regionId: region.id, apiKeyId, tokenPreview, permissions, rateLimit, region: { region, apiKeys } };
  }

  listRegions(): Promise<Region[]> {
    return this.repository.listRegions();
  }

  /**
   * Creates a key granting at most what `held` (the caller's key's permissions) holds, with a rate
   * limit no faster than the caller's (by default the caller's own); an operator holds everything.
   * Answers with the region too, for the operator who named it by id.
   */
  async createKey(
    regionId: string,
    request: KeyGrantRequest,
    origin: ChangeOrigin,
    held: Held = OPERATOR_HOLDS,
  ): Promise<IssuedApiKey & { region: Pick<Region, 'id' | 'name'> }> {
    const permissions = grantable(request.permissions, held.permissions);
    const rateLimit = this.grantableRate(request.rateLimit === undefined ? held.rateLimit : request.rateLimit, held);
    const expiresAt = this.expiryOf(request.expiresAt) ?? null;
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      const region = await this.repository.lockRegion(tx, regionId);
      if (!region) throw new RegionNotFoundError(regionId);
      const now = this.clock.now();
      const limit = this.settings.MAX_API_KEYS_PER_REGION;
      if ((await this.repository.countActiveKeys(tx, regionId, now)) >= limit) throw new ApiKeyLimitError(limit);
      const issued = await this.issueKey(tx, regionId, {
        description: request.description ?? null,
        permissions,
        allowedCidrs: request.allowedCidrs ?? null,
        expiresAt,
        rateLimit,
      });
      await this.record(tx, regionId, now, origin, [['api_key.created', grantOf(issued.apiKey)]]);
      return { ...issued, region };
    });
  }

  /**
   * Revokes a key unless the region would be left with no key that keeps working and may
   * read the region and manage its keys: keys scheduled to stop, keys without both
   * permissions, and keys no address may use do not count, so neither time passing nor keys
   * that can only read, only write, or not be used at all leave a region unmanageable. The
   * region row is locked before counting, so concurrent changes to one region's keys (from
   * any number of instances) queue on that lock and each counts what the previous one
   * committed; within one instance they queue before taking a connection (UnitOfWork.runLockingRow).
   * The time is read once the lock is held: a change that waited for it goes by the time it
   * is made, and its event follows the one it waited for.
   */
  async revokeKey(
    regionId: string,
    keyId: string,
    origin: ChangeOrigin,
    conditions: KeyConditions = {},
  ): Promise<void> {
    await this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const key = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
      if (!key) throw new ApiKeyNotFoundError();
      const failed = failedKeyCondition(conditions, key);
      if (failed) throw new ApiKeyChangedError(failed);
      await this.keepManageable(tx, regionId, key, null);
      await this.repository.revokeKey(tx, keyId, now);
      await this.record(tx, regionId, now, origin, [['api_key.revoked', keyOf(key)]]);
    });
  }

  /**
   * Settles leak reports of active keys of one region: each is revoked at once, as a DELETE
   * would, unless the last-key rule keeps it (see leavesNoManager), under the same region row
   * lock, so reports and changes from any instance queue as DELETEs do. A kept key is flagged
   * (leakReportedAt); both get an api_key.leak_reported event, a revoked one its api_key.revoked.
   * Keys no longer active when the lock is held are left out. Answers what became of each.
   */
  async settleLeakReports(regionId: string, keyIds: string[], origin: ChangeOrigin): Promise<LeakReportOutcome[]> {
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const outcomes: LeakReportOutcome[] = [];
      for (const keyId of keyIds) {
        const key = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
        if (!key) continue;
        const reported: [RegionEventType, EventApiKey] = ['api_key.leak_reported', keyOf(key)];
        const kept = await this.leavesNoManager(tx, regionId, key, null);
        if (kept) {
          await this.repository.flagLeakReported(tx, keyId, now);
          await this.record(tx, regionId, now, origin, [reported]);
        } else {
          await this.repository.revokeKey(tx, keyId, now);
          await this.record(tx, regionId, now, origin, [reported, ['api_key.revoked', keyOf(key)]]);
        }
        outcomes.push({ keyId, regionId, outcome: kept ? 'flagged' : 'revoked' });
      }
      return outcomes;
    });
  }

  /**
   * Replaces a key: creates a new one and schedules the old one to stop after
   * `revokeOldAfterSeconds` (0: at once). The old key's description, permissions, allowlist
   * and expiry are kept unless others are given, so a roll that names none never widens a key; the
   * permissions are never more than the caller holds, asked for or kept. Rolling the region's
   * last permanent manager into a key that cannot manage (without region:read or keys:write,
   * or with an allowlist no address passes) or that expires is refused: once the old key
   * stops, nothing could read and manage the region. A key rolling itself keeps working for
   * at least MIN_SELF_ROLL_GRACE_SECONDS: the answer holds the only copy of the new secret,
   * and a retry of the roll, which replays it, authenticates with the old key.
   */
  async rollKey(
    regionId: string,
    keyId: string,
    options: KeyGrantRequest & { revokeOldAfterSeconds: number },
    origin: ChangeOrigin,
    held: Held = OPERATOR_HOLDS,
  ): Promise<RolledApiKey> {
    // Asking for more than the caller holds is refused before anything is read, as on create.
    const asked = options.permissions && grantable(options.permissions, held.permissions);
    const askedRate = options.rateLimit === undefined ? undefined : this.grantableRate(options.rateLimit, held);
    const askedExpiry = this.expiryOf(options.expiresAt);
    const rollsItself = origin.actor.type === 'api_key' && origin.actor.apiKeyId === keyId;
    if (rollsItself && options.revokeOldAfterSeconds < MIN_SELF_ROLL_GRACE_SECONDS) throw selfRollTooShort();
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const old = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
      if (!old) throw new ApiKeyNotFoundError();
      if (old.revokesAt) throw new ApiKeyAlreadyRolledError(old.revokesAt);
      const permissions = asked ?? grantable(old.permissions, held.permissions, unkeepablePermissions);
      const allowedCidrs = options.allowedCidrs === undefined ? old.allowedCidrs : options.allowedCidrs;
      const expiresAt = askedExpiry === undefined ? old.expiresAt : askedExpiry;
      const rateLimit = askedRate === undefined ? this.grantableRate(old.rateLimit, held, true) : askedRate;
      const revokedAtOnce = options.revokeOldAfterSeconds === 0;
      // The limit counts the new key; an old key revoked at once no longer counts.
      const limit = this.settings.MAX_API_KEYS_PER_REGION;
      const activeAfter = (await this.repository.countActiveKeys(tx, regionId, now)) + 1 - (revokedAtOnce ? 1 : 0);
      if (activeAfter > limit) throw new ApiKeyLimitError(limit);
      await this.keepManageable(tx, regionId, old, { permissions, allowedCidrs, expiresAt, revokesAt: null });
      const revokesAt = new Date(now.getTime() + options.revokeOldAfterSeconds * 1000);
      await this.repository.scheduleRevocation(tx, old.id, revokesAt, revokedAtOnce ? now : null, now);
      const issued = await this.issueKey(tx, regionId, {
        description: options.description === undefined ? old.description : options.description,
        permissions,
        allowedCidrs,
        expiresAt,
        rateLimit,
      });
      // Each event names the other key, so either leads to the other.
      await this.record(tx, regionId, now, origin, [
        ['api_key.rolled', { ...grantOf(old), revokesAt, replacedBy: keyOf(issued.apiKey) }],
        ['api_key.created', { ...grantOf(issued.apiKey), replaces: { id: old.id } }],
      ]);
      return { ...issued, replaces: { id: old.id, revokesAt } };
    });
  }

  /**
   * A key of the caller's region as GET /auth/regions/me lists it: from the keys the query
   * that accepted the caller's key read, so it costs no query of its own. Revoked, expired
   * and other regions' keys are not among them.
   */
  findKey(caller: RegionPrincipal, keyId: string): ApiKeyRecord {
    const key = caller.region.apiKeys.find((candidate) => candidate.id === keyId);
    if (!key) throw new ApiKeyNotFoundError();
    return key;
  }

  /**
   * Changes a key's description, permissions (only fewer, and never more than `held`),
   * allowlist or expiry (lifted, widened or postponed only when `held` covers every permission
   * the key keeps: see widensReach), with its region row locked as for a DELETE: a change that would
   * leave the region without a permanent manager (see revokeKey) is refused, also under
   * concurrent changes. With If-Match, only while the key is still as its holder read it (its
   * ETag, checked under the lock). A patch that changes nothing answers the key as it is,
   * with no event; otherwise one api_key.updated records what it set.
   */
  async updateKey(
    regionId: string,
    keyId: string,
    patch: KeyPatch,
    conditions: KeyConditions,
    origin: ChangeOrigin,
    held: Held = OPERATOR_HOLDS,
  ): Promise<ApiKeyRecord> {
    const asked = patch.permissions && grantable(patch.permissions, held.permissions);
    const rateLimit = patch.rateLimit === undefined ? undefined : this.grantableRate(patch.rateLimit, held);
    const expiresAt = this.expiryOf(patch.expiresAt);
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const key = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
      if (!key) throw new ApiKeyNotFoundError();
      const failed = failedKeyCondition(conditions, key);
      if (failed) throw new ApiKeyChangedError(failed);
      const wider = asked?.filter((permission) => !key.permissions.includes(permission)) ?? [];
      if (wider.length > 0) throw unnarrowingPermissions(wider);
      const changes = changesOf(key, {
        description: patch.description,
        permissions: asked,
        allowedCidrs: patch.allowedCidrs && [...new Set(patch.allowedCidrs)],
        expiresAt,
        rateLimit,
      });
      if (Object.keys(changes).length === 0) return key;
      const after = { ...key, ...changes };
      // As a roll that keeps the old key's permissions: more reach for a key is a grant of what it holds.
      const beyond = after.permissions.filter((permission) => !held.permissions.includes(permission));
      if (beyond.length > 0 && widensReach(key, changes)) throw unwidenableKey(beyond);
      await this.keepManageable(tx, regionId, key, after);
      const updated = await this.repository.updateKey(tx, keyId, changes, now);
      await this.record(tx, regionId, now, origin, [['api_key.updated', eventKeyOf(updated)]], eventChangesOf(changes));
      return updated;
    });
  }

  /**
   * The last-key rule, the one place it is decided: a region keeps at least one permanent
   * manager (see isPermanentManager), a key that can both read the region and manage its keys,
   * so a change that leaves the last one something else (`after`, or null when it stops) is
   * refused. Called with the region row locked, so the count is of what the changes queued
   * before this one committed.
   */
  private async keepManageable(
    tx: Transaction,
    regionId: string,
    key: ManagerFields,
    after: ManagerFields | null,
  ): Promise<void> {
    if (await this.leavesNoManager(tx, regionId, key, after)) throw new LastApiKeyError();
  }

  /** Whether the change keepManageable refuses would leave the region without a permanent manager. */
  private async leavesNoManager(
    tx: Transaction,
    regionId: string,
    key: ManagerFields,
    after: ManagerFields | null,
  ): Promise<boolean> {
    if (!isPermanentManager(key) || (after !== null && isPermanentManager(after))) return false;
    return (await this.repository.countPermanentManagers(tx, regionId)) <= 1;
  }

  /**
   * The rate limit asked for (null: the region default), refused when it is faster than the
   * caller's own (null: the region default too; absent: an operator, who holds every rate).
   * `kept`: a roll that keeps the old key's.
   */
  private grantableRate(asked: KeyRateLimit | null | undefined, held: Held, kept = false): KeyRateLimit | null {
    if (held.rateLimit === undefined) return asked ?? null;
    const regionDefault = this.settings.regionKeyRateLimit;
    const [wanted, own] = [asked ?? regionDefault, held.rateLimit ?? regionDefault];
    if (fasterThan(wanted, own)) throw rateLimitAboveCaller(wanted, own, kept);
    return asked ?? null;
  }

  /**
   * An expiresAt as asked for: undefined (not asked), null (never), or the time, which must be
   * at least a minute ahead of the clock (a key that stops before its holder has deployed it
   * helps nobody) and at most API_KEY_MAX_LIFETIME_DAYS ahead.
   */
  private expiryOf(value: string | null | undefined): Date | null | undefined {
    if (value === undefined || value === null) return value;
    const at = new Date(value);
    const now = this.clock.now().getTime();
    const days = this.settings.API_KEY_MAX_LIFETIME_DAYS;
    if (at.getTime() < now + MIN_EXPIRY_AHEAD_MS || at.getTime() > now + days * DAY_MS) {
      throw new ValidationFailedError([
        {
          field: 'expiresAt',
          message:
            `expiresAt must be at least 60 seconds and at most ${days} days ahead of the server's clock ` +
            `(${new Date(now).toISOString()})`,
        },
      ]);
    }
    return at;
  }

  /** A region's events, newest first, from the position a previous page's cursor names. */
  async listEvents(regionId: string, limit: number, cursor?: string): Promise<RegionEventPage> {
    const after = cursor === undefined ? null : await this.positionOf(regionId, cursor);
    // One more than asked tells whether there is a next page without counting.
    const rows = await this.events.listByRegion(regionId, limit + 1, after);
    const events = rows.slice(0, limit);
    const last = events[events.length - 1];
    return { events, next: rows.length > limit && last ? encodeEventCursor(last.id) : null };
  }

  /** Events are never deleted, so a cursor of this region always resolves; one of another region never does. */
  private async positionOf(regionId: string, cursor: string) {
    const position = await this.events.findPosition(regionId, decodeEventCursor(cursor));
    if (!position) throw invalidEventCursor();
    return position;
  }

  regionExists(regionId: string): Promise<boolean> {
    return this.repository.regionExists(regionId);
  }

  /** Creates a region with its first key. For operators (CLI, first start), not for HTTP. */
  createRegion(
    name: string,
    description: string | null,
    allowedCidrs: string[] | null = null,
  ): Promise<IssuedApiKey & { region: Region }> {
    return this.unitOfWork.run(async (tx) => {
      const region = await this.repository.insertRegion(tx, { id: randomUUID(), name });
      // The first key manages the region: a region must keep a key holding both permissions.
      const issued = await this.issueKey(tx, region.id, {
        description,
        permissions: [...PERMISSIONS],
        allowedCidrs,
        expiresAt: null,
        rateLimit: null,
      });
      await this.record(tx, region.id, this.clock.now(), OPERATOR, [['region.created', grantOf(issued.apiKey)]]);
      return { region, ...issued };
    });
  }

  /**
   * Creates a region with its first key only if the database has no region yet. Instances
   * starting together on an empty database serialise on a lock, so only one creates it.
   * Resolves to null when there already was a region.
   */
  createFirstRegion(
    name: string,
    description: string,
    presetKey?: string,
  ): Promise<(IssuedApiKey & { region: Region }) | null> {
    return this.unitOfWork.run((tx) => this.createFirstRegionIn(tx, name, description, presetKey));
  }

  /** createFirstRegion in the caller's transaction: a sandbox reset empties and refills in one. */
  async createFirstRegionIn(
    tx: Transaction,
    name: string,
    description: string,
    presetKey?: string,
  ): Promise<(IssuedApiKey & { region: Region }) | null> {
    await this.repository.lockFirstRegionCreation(tx);
    if (await this.repository.hasAnyRegion(tx)) return null;
    const region = await this.repository.insertRegion(tx, { id: randomUUID(), name });
    const issued = await this.issueKey(
      tx,
      region.id,
      { description, permissions: [...PERMISSIONS], allowedCidrs: null, expiresAt: null, rateLimit: null },
      presetKey,
    );
    await this.record(tx, region.id, this.clock.now(), OPERATOR, [['region.created', grantOf(issued.apiKey)]]);
    return { region, ...issued };
  }

  /**
   * Whether the database ever held a generated live key: a sandbox reset refuses to empty it,
   * as it is then no sandbox's database, whatever API_ENVIRONMENT says.
   */
  hasIssuedLiveKeys(tx: Transaction): Promise<boolean> {
    return this.repository.hasLiveGeneratedKey(tx);
  }

  async hasAnyRegion(): Promise<boolean> {
    return this.repository.hasAnyRegion();
  }

  private async issueKey(
    tx: Transaction,
    regionId: string,
    { description, permissions, allowedCidrs, expiresAt, rateLimit }: Required<ApiKeyChanges>,
    presetKey?: string,
  ): Promise<IssuedApiKey> {
    const key = presetKey ?? generateApiKey(this.config.API_ENVIRONMENT);
    const apiKey = await this.repository.insertKey(tx, {
      id: randomUUID(),
      regionId,
      tokenHash: hashApiKey(key),
      tokenPreview: previewApiKey(key),
      description,
      permissions,
      // Canonical CIDRs name one network by one string; each is stored once, whoever sent the list.
      allowedCidrs: allowedCidrs && [...new Set(allowedCidrs)],
      expiresAt,
      rateLimit,
    });
    return { apiKey, key };
  }

  /** Appends events to the region's trail, in the transaction of the change they record. */
  private record(
    tx: Transaction,
    regionId: string,
    occurredAt: Date,
    origin: ChangeOrigin,
    entries: [RegionEventType, EventApiKey][],
    changes?: KeyChanges,
  ): Promise<void> {
    return this.events.insert(
      tx,
      entries.map(([type, apiKey]) => ({
        id: randomUUID(),
        regionId,
        type,
        occurredAt,
        apiKey,
        ...(changes ? { changes } : {}),
        ...origin,
      })),
    );
  }

  /** Moves lastUsedAt at most once per resolution period; the answer shows the time written. */
  private async recordUse(found: KeyWithRegion, now: Date): Promise<void> {
    const staleBefore = new Date(now.getTime() - this.settings.API_KEY_LAST_USED_RESOLUTION_SECONDS * 1000);
    if (found.lastUsedAt && found.lastUsedAt >= staleBefore) return;
    const written = await this.repository.touchLastUsed(found.apiKeyId, now, staleBefore);
    const presented = found.apiKeys.find((key) => key.id === found.apiKeyId);
    if (written && presented) presented.lastUsedAt = written;
  }
}

const MIN_EXPIRY_AHEAD_MS = 60_000;
/** How long at least a key rolling itself keeps working: time to retry the roll and be answered. */
export const MIN_SELF_ROLL_GRACE_SECONDS = 60;

const selfRollTooShort = () =>
  new ValidationFailedError([
    {
      field: 'revokeOldAfterSeconds',
      message:
        `revokeOldAfterSeconds must be at least ${MIN_SELF_ROLL_GRACE_SECONDS} when a key rolls itself: a retry of ` +
        'the roll (with the same Idempotency-Key) authenticates with this key, and only the answer holds the new ' +
        'secret. To stop this key sooner, DELETE it with the new key',
    },
  ]);
const DAY_MS = 86_400_000;

const keyOf = (key: Pick<ApiKeyRecord, 'id' | 'tokenPreview'>): EventApiKey => ({
  id: key.id,
  tokenPreview: key.tokenPreview,
});

/** The key an event names, with its expiry when it has one. */
const eventKeyOf = (key: ApiKeyRecord): EventApiKey => ({
  ...keyOf(key),
  ...(key.expiresAt ? { expiresAt: key.expiresAt } : {}),
});

/** A key with what it may do, from where, how often and until when, for the events that create or roll it. */
const grantOf = (key: ApiKeyRecord): EventApiKey => ({
  ...eventKeyOf(key),
  grant: { permissions: key.permissions, allowedCidrs: key.allowedCidrs, rateLimit: key.rateLimit },
});

type ManagerFields = Pick<ApiKeyRecord, 'revokesAt' | 'expiresAt' | 'permissions' | 'allowedCidrs'>;

/**
 * What the last-key rule counts (as RegionKeysRepository.countPermanentManagers does in SQL): a
 * key that keeps working (neither scheduled to stop nor expiring), may read the region and
 * manage its keys, and some address may use.
 */
const isPermanentManager = (key: ManagerFields): boolean =>
  key.revokesAt === null &&
  key.expiresAt === null &&
  SELF_MANAGING.every((permission) => key.permissions.includes(permission)) &&
  admitsSomeAddress(key.allowedCidrs);

/**
 * Whether changes give a key more reach: an allowlist lifted, or one admitting an address the
 * old one refused; an expiry lifted or postponed. Setting or narrowing either takes reach away.
 */
function widensReach(key: ApiKeyRecord, changes: ApiKeyChanges): boolean {
  const cidrs = changes.allowedCidrs;
  const widerCidrs =
    cidrs !== undefined && key.allowedCidrs !== null && (cidrs === null || !allowlistWithin(cidrs, key.allowedCidrs));
  const expiry = changes.expiresAt;
  const laterExpiry =
    expiry !== undefined && key.expiresAt !== null && (expiry === null || expiry.getTime() > key.expiresAt.getTime());
  return widerCidrs || laterExpiry;
}

const sameList = (a: readonly string[] | null, b: readonly string[] | null): boolean =>
  a === b || (a !== null && b !== null && a.length === b.length && a.every((item, i) => item === b[i]));

const sameRateLimit = (a: KeyRateLimit | null, b: KeyRateLimit | null): boolean =>
  a === b || (a !== null && b !== null && a.requests === b.requests && a.perSeconds === b.perSeconds);

/** The fields of `asked` (absent: not asked) whose values differ from the key's. */
function changesOf(key: ApiKeyRecord, asked: ApiKeyChanges): ApiKeyChanges {
  const changes: ApiKeyChanges = {};
  if (asked.description !== undefined && asked.description !== key.description) changes.description = asked.description;
  if (asked.permissions !== undefined && !sameList(asked.permissions, key.permissions))
    changes.permissions = asked.permissions;
  if (asked.allowedCidrs !== undefined && !sameList(asked.allowedCidrs, key.allowedCidrs))
    changes.allowedCidrs = asked.allowedCidrs;
  if (asked.expiresAt !== undefined && asked.expiresAt?.getTime() !== key.expiresAt?.getTime())
    changes.expiresAt = asked.expiresAt;
  if (asked.rateLimit !== undefined && !sameRateLimit(asked.rateLimit, key.rateLimit))
    changes.rateLimit = asked.rateLimit;
  return changes;
}

/** The changes as an api_key.updated records them: JSON values, times as ISO strings. */
const eventChangesOf = ({ expiresAt, ...rest }: ApiKeyChanges): KeyChanges => ({
  ...rest,
  ...(expiresAt === undefined ? {} : { expiresAt: expiresAt?.toISOString() ?? null }),
});

/** The permissions asked for (default: all that `held` holds), refused when they exceed it. */
function grantable(
  requested: readonly Permission[] | undefined,
  held: readonly Permission[],
  refusal = ungrantablePermissions,
): Permission[] {
  const permissions = normalisePermissions(requested ?? held);
  const beyond = permissions.filter((permission) => !held.includes(permission));
  if (beyond.length > 0) throw refusal(beyond);
  return permissions;
}
