import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock/clock';
import { AppConfig } from '../config/app-config';
import { RowLockGate } from '../database/row-lock-gate';
import { allowlistOf } from './address-allowlist';
import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from './api-key-codec';
import { Region } from './entities/region.entity';
import { decodeEventCursor, encodeEventCursor, invalidEventCursor } from './event-cursor';
import {
  type EventActor,
  type EventApiKey,
  RegionEventsRepository,
  type RegionEventRecord,
  type RegionEventType,
} from './region-events.repository';
import { MANAGE_KEYS, normalisePermissions, type Permission, PERMISSIONS } from './permissions';
import {
  AddressNotAllowedError,
  ApiKeyAlreadyRolledError,
  ApiKeyLimitError,
  ApiKeyNotFoundError,
  LastApiKeyError,
  RegionNotFoundError,
  ungrantablePermissions,
} from './region-keys.errors';
import { type ApiKeyRecord, type KeyWithRegion, RegionKeysRepository, type RegionRecord } from './region-keys.repository';

export interface RegionWithKeys {
  region: RegionRecord;
  /** Active keys, oldest first. */
  apiKeys: ApiKeyRecord[];
}

/** Who is calling, once an API key has been accepted. */
export interface RegionPrincipal {
  regionId: string;
  apiKeyId: string;
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
}

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

@Injectable()
export class RegionKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: RegionKeysRepository,
    private readonly events: RegionEventsRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly rowLocks: RowLockGate,
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
    const { apiKeyId, tokenPreview, permissions, region, apiKeys } = found;
    return { regionId: region.id, apiKeyId, tokenPreview, permissions, region: { region, apiKeys } };
  }

  listRegions(): Promise<Region[]> {
    return this.repository.listRegions();
  }

  /**
   * Creates a key granting at most what `held` (the caller's key's permissions) holds; an
   * operator holds everything.
   */
  createKey(regionId: string, request: KeyGrantRequest, origin: ChangeOrigin, held: readonly Permission[] = PERMISSIONS): Promise<IssuedApiKey> {
    const permissions = grantable(request.permissions, held);
    return this.rowLocks.transaction(`region:${regionId}`, async (manager) => {
      if (!(await this.repository.lockRegion(manager, regionId))) throw new RegionNotFoundError(regionId);
      const now = this.clock.now();
      const limit = this.config.MAX_API_KEYS_PER_REGION;
      if ((await this.repository.countActiveKeys(manager, regionId, now)) >= limit) throw new ApiKeyLimitError(limit);
      const issued = await this.issueKey(manager, regionId, request.description ?? null, permissions, request.allowedCidrs ?? null);
      await this.record(manager, regionId, now, origin, [['api_key.created', grantOf(issued.apiKey)]]);
      return issued;
    });
  }

  /**
   * Revokes a key unless the region would be left with no key that keeps working and may
   * manage keys: keys scheduled to stop, and keys without keys:write, do not count, so
   * neither time passing nor a read-only key left alone leaves a region unmanageable. The
   * region row is locked before counting, so concurrent changes to one region's keys (from
   * any number of instances) queue on that lock and each counts what the previous one
   * committed; within one instance they queue before taking a connection (RowLockGate).
   * The time is read once the lock is held: a change that waited for it goes by the time it
   * is made, and its event follows the one it waited for.
   */
  async revokeKey(regionId: string, keyId: string, origin: ChangeOrigin): Promise<void> {
    await this.rowLocks.transaction(`region:${regionId}`, async (manager) => {
      await this.repository.lockRegion(manager, regionId);
      const now = this.clock.now();
      const key = await this.repository.findActiveKeyInRegion(manager, keyId, regionId, now);
      if (!key) throw new ApiKeyNotFoundError();
      if (isPermanentManager(key) && (await this.repository.countPermanentManagers(manager, regionId)) <= 1) throw new LastApiKeyError();
      await this.repository.revokeKey(manager, keyId, now);
      await this.record(manager, regionId, now, origin, [['api_key.revoked', keyOf(key)]]);
    });
  }

  /**
   * Replaces a key: creates a new one and schedules the old one to stop after
   * `revokeOldAfterSeconds` (0: at once). The new key never expires, so the region keeps a
   * key that keeps working. The old key's description and allowlist are kept unless others
   * are given; the permissions are the caller's unless fewer are asked for. Rolling the
   * region's last permanent manager into a key without keys:write is refused: once the old
   * key stops, nothing could manage the region.
   */
  rollKey(
    regionId: string,
    keyId: string,
    options: KeyGrantRequest & { revokeOldAfterSeconds: number },
    origin: ChangeOrigin,
    held: readonly Permission[] = PERMISSIONS,
  ): Promise<RolledApiKey> {
    const permissions = grantable(options.permissions, held);
    return this.rowLocks.transaction(`region:${regionId}`, async (manager) => {
      await this.repository.lockRegion(manager, regionId);
      const now = this.clock.now();
      const old = await this.repository.findActiveKeyInRegion(manager, keyId, regionId, now);
      if (!old) throw new ApiKeyNotFoundError();
      if (old.revokesAt) throw new ApiKeyAlreadyRolledError(old.revokesAt);
      const revokedAtOnce = options.revokeOldAfterSeconds === 0;
      // The limit counts the new key; an old key revoked at once no longer counts.
      const limit = this.config.MAX_API_KEYS_PER_REGION;
      const activeAfter = (await this.repository.countActiveKeys(manager, regionId, now)) + 1 - (revokedAtOnce ? 1 : 0);
      if (activeAfter > limit) throw new ApiKeyLimitError(limit);
      if (
        isPermanentManager(old) &&
        !permissions.includes(MANAGE_KEYS) &&
        (await this.repository.countPermanentManagers(manager, regionId)) <= 1
      ) {
        throw new LastApiKeyError();
      }
      const revokesAt = new Date(now.getTime() + options.revokeOldAfterSeconds * 1000);
      await this.repository.scheduleRevocation(manager, old.id, revokesAt, revokedAtOnce ? now : null, now);
      const issued = await this.issueKey(
        manager,
        regionId,
        options.description === undefined ? old.description : options.description,
        permissions,
        options.allowedCidrs === undefined ? old.allowedCidrs : options.allowedCidrs,
      );
      await this.record(manager, regionId, now, origin, [
        ['api_key.rolled', { ...grantOf(old), revokesAt }],
        ['api_key.created', grantOf(issued.apiKey)],
      ]);
      return { ...issued, replaces: { id: old.id, revokesAt } };
    });
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
  createRegion(name: string, description: string | null, allowedCidrs: string[] | null = null): Promise<IssuedApiKey & { region: Region }> {
    return this.dataSource.transaction(async (manager) => {
      const region = await this.repository.insertRegion(manager, { id: randomUUID(), name });
      // The first key manages the region: a region must keep a key holding keys:write.
      const issued = await this.issueKey(manager, region.id, description, [...PERMISSIONS], allowedCidrs);
      await this.record(manager, region.id, this.clock.now(), OPERATOR, [['region.created', grantOf(issued.apiKey)]]);
      return { region, ...issued };
    });
  }

  /**
   * Creates a region with its first key only if the database has no region yet. Instances
   * starting together on an empty database serialise on a lock, so only one creates it.
   * Resolves to null when there already was a region.
   */
  createFirstRegion(name: string, description: string, presetKey?: string): Promise<(IssuedApiKey & { region: Region }) | null> {
    return this.dataSource.transaction((manager) => this.createFirstRegionIn(manager, name, description, presetKey));
  }

  /** createFirstRegion in the caller's transaction: a sandbox reset empties and refills in one. */
  async createFirstRegionIn(
    manager: EntityManager,
    name: string,
    description: string,
    presetKey?: string,
  ): Promise<(IssuedApiKey & { region: Region }) | null> {
    await this.repository.lockFirstRegionCreation(manager);
    if (await this.repository.hasAnyRegion(manager)) return null;
    const region = await this.repository.insertRegion(manager, { id: randomUUID(), name });
    const issued = await this.issueKey(manager, region.id, description, [...PERMISSIONS], null, presetKey);
    await this.record(manager, region.id, this.clock.now(), OPERATOR, [['region.created', grantOf(issued.apiKey)]]);
    return { region, ...issued };
  }

  /**
   * Whether the database ever held a generated live key: a sandbox reset refuses to empty it,
   * as it is then no sandbox's database, whatever API_ENVIRONMENT says.
   */
  hasIssuedLiveKeys(manager: EntityManager): Promise<boolean> {
    return this.repository.hasLiveGeneratedKey(manager);
  }

  async hasAnyRegion(): Promise<boolean> {
    return this.repository.hasAnyRegion();
  }

  private async issueKey(
    manager: EntityManager,
    regionId: string,
    description: string | null,
    permissions: Permission[],
    allowedCidrs: string[] | null,
    presetKey?: string,
  ): Promise<IssuedApiKey> {
    const key = presetKey ?? generateApiKey(this.config.API_ENVIRONMENT);
    const apiKey = await this.repository.insertKey(manager, {
      id: randomUUID(),
      regionId,
      tokenHash: hashApiKey(key),
      tokenPreview: previewApiKey(key),
      description,
      permissions,
      allowedCidrs,
    });
    return { apiKey, key };
  }

  /** Appends events to the region's trail, in the transaction of the change they record. */
  private record(
    manager: EntityManager,
    regionId: string,
    occurredAt: Date,
    origin: ChangeOrigin,
    entries: [RegionEventType, EventApiKey][],
  ): Promise<void> {
    return this.events.insert(
      manager,
      entries.map(([type, apiKey]) => ({ id: randomUUID(), regionId, type, occurredAt, apiKey, ...origin })),
    );
  }

  /** Moves lastUsedAt at most once per resolution period; the answer shows the time written. */
  private async recordUse(found: KeyWithRegion, now: Date): Promise<void> {
    const staleBefore = new Date(now.getTime() - this.config.API_KEY_LAST_USED_RESOLUTION_SECONDS * 1000);
    if (found.lastUsedAt && found.lastUsedAt >= staleBefore) return;
    const written = await this.repository.touchLastUsed(found.apiKeyId, now, staleBefore);
    const presented = found.apiKeys.find((key) => key.id === found.apiKeyId);
    if (written && presented) presented.lastUsedAt = written;
  }
}

const keyOf = (key: Pick<ApiKeyRecord, 'id' | 'tokenPreview'>): EventApiKey => ({ id: key.id, tokenPreview: key.tokenPreview });

/** A key with what it may do and from where, for the events that create or roll it. */
const grantOf = (key: ApiKeyRecord): EventApiKey => ({ ...keyOf(key), grant: { permissions: key.permissions, allowedCidrs: key.allowedCidrs } });

const isPermanentManager = (key: ApiKeyRecord) => key.revokesAt === null && key.permissions.includes(MANAGE_KEYS);

/** The permissions asked for (default: all that `held` holds), refused when they exceed it. */
function grantable(requested: readonly Permission[] | undefined, held: readonly Permission[]): Permission[] {
  const permissions = normalisePermissions(requested ?? held);
  const beyond = permissions.filter((permission) => !held.includes(permission));
  if (beyond.length > 0) throw ungrantablePermissions(beyond);
  return permissions;
}
