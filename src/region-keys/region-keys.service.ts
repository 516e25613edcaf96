import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { Clock } from '../common/clock';
import { AppConfig } from '../config';
import { type Transaction, UnitOfWork } from '../database';
import { admitsSomeAddress, allowlistOf } from './address-allowlist';
import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from './api-key-codec';
import { Region } from './entities/region.entity';
import { decodeEventCursor, encodeEventCursor, invalidEventCursor } from './event-cursor';
import { MANAGE_KEYS, normalisePermissions, type Permission, PERMISSIONS } from './permissions';
import { type EventApiKey, RegionEventsRepository, type RegionEventType } from './region-events.repository';
import {
  AddressNotAllowedError,
  ApiKeyAlreadyRolledError,
  ApiKeyLimitError,
  ApiKeyNotFoundError,
  LastApiKeyError,
  RegionNotFoundError,
  ungrantablePermissions,
  unkeepablePermissions,
} from './region-keys.errors';
import { type ApiKeyRecord, type KeyWithRegion, RegionKeysRepository } from './region-keys.repository';
import { RegionKeysSettings } from './region-keys.settings';
import {
  type ChangeOrigin,
  type IssuedApiKey,
  type KeyGrantRequest,
  OPERATOR,
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
    const { apiKeyId, tokenPreview, permissions, region, apiKeys } = found;
    return { regionId: region.id, apiKeyId, tokenPreview, permissions, region: { region, apiKeys } };
  }

  listRegions(): Promise<Region[]> {
    return this.repository.listRegions();
  }

  /**
   * Creates a key granting at most what `held` (the caller's key's permissions) holds; an
   * operator holds everything. Answers with the region too, for the operator who named it by id.
   */
  createKey(
    regionId: string,
    request: KeyGrantRequest,
    origin: ChangeOrigin,
    held: readonly Permission[] = PERMISSIONS,
  ): Promise<IssuedApiKey & { region: Pick<Region, 'id' | 'name'> }> {
    const permissions = grantable(request.permissions, held);
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      const region = await this.repository.lockRegion(tx, regionId);
      if (!region) throw new RegionNotFoundError(regionId);
      const now = this.clock.now();
      const limit = this.settings.MAX_API_KEYS_PER_REGION;
      if ((await this.repository.countActiveKeys(tx, regionId, now)) >= limit) throw new ApiKeyLimitError(limit);
      const issued = await this.issueKey(
        tx,
        regionId,
        request.description ?? null,
        permissions,
        request.allowedCidrs ?? null,
      );
      await this.record(tx, regionId, now, origin, [['api_key.created', grantOf(issued.apiKey)]]);
      return { ...issued, region };
    });
  }

  /**
   * Revokes a key unless the region would be left with no key that keeps working and may
   * manage keys: keys scheduled to stop, keys without keys:write, and keys no address may use
   * do not count, so neither time passing nor a read-only or unusable key left alone leaves
   * a region unmanageable. The
   * region row is locked before counting, so concurrent changes to one region's keys (from
   * any number of instances) queue on that lock and each counts what the previous one
   * committed; within one instance they queue before taking a connection (UnitOfWork.runLockingRow).
   * The time is read once the lock is held: a change that waited for it goes by the time it
   * is made, and its event follows the one it waited for.
   */
  async revokeKey(regionId: string, keyId: string, origin: ChangeOrigin): Promise<void> {
    await this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const key = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
      if (!key) throw new ApiKeyNotFoundError();
      if (isPermanentManager(key) && (await this.repository.countPermanentManagers(tx, regionId)) <= 1)
        throw new LastApiKeyError();
      await this.repository.revokeKey(tx, keyId, now);
      await this.record(tx, regionId, now, origin, [['api_key.revoked', keyOf(key)]]);
    });
  }

  /**
   * Replaces a key: creates a new one and schedules the old one to stop after
   * `revokeOldAfterSeconds` (0: at once). The new key never expires, so the region keeps a
   * key that keeps working. The old key's description, permissions and allowlist are kept
   * unless others are given, so a roll never widens a key; the permissions are never more
   * than the caller holds, asked for or kept. Rolling the region's last permanent manager
   * into a key that cannot manage (no keys:write, or an allowlist no address passes) is
   * refused: once the old key stops, nothing could manage the region.
   */
  rollKey(
    regionId: string,
    keyId: string,
    options: KeyGrantRequest & { revokeOldAfterSeconds: number },
    origin: ChangeOrigin,
    held: readonly Permission[] = PERMISSIONS,
  ): Promise<RolledApiKey> {
    // Asking for more than the caller holds is refused before anything is read, as on create.
    const asked = options.permissions && grantable(options.permissions, held);
    return this.unitOfWork.runLockingRow(`region:${regionId}`, async (tx) => {
      await this.repository.lockRegion(tx, regionId);
      const now = this.clock.now();
      const old = await this.repository.findActiveKeyInRegion(tx, keyId, regionId, now);
      if (!old) throw new ApiKeyNotFoundError();
      if (old.revokesAt) throw new ApiKeyAlreadyRolledError(old.revokesAt);
      const permissions = asked ?? grantable(old.permissions, held, unkeepablePermissions);
      const allowedCidrs = options.allowedCidrs === undefined ? old.allowedCidrs : options.allowedCidrs;
      const revokedAtOnce = options.revokeOldAfterSeconds === 0;
      // The limit counts the new key; an old key revoked at once no longer counts.
      const limit = this.settings.MAX_API_KEYS_PER_REGION;
      const activeAfter = (await this.repository.countActiveKeys(tx, regionId, now)) + 1 - (revokedAtOnce ? 1 : 0);
      if (activeAfter > limit) throw new ApiKeyLimitError(limit);
      if (
        isPermanentManager(old) &&
        !canManage(permissions, allowedCidrs) &&
        (await this.repository.countPermanentManagers(tx, regionId)) <= 1
      ) {
        throw new LastApiKeyError();
      }
      const revokesAt = new Date(now.getTime() + options.revokeOldAfterSeconds * 1000);
      await this.repository.scheduleRevocation(tx, old.id, revokesAt, revokedAtOnce ? now : null, now);
      const issued = await this.issueKey(
        tx,
        regionId,
        options.description === undefined ? old.description : options.description,
        permissions,
        allowedCidrs,
      );
      await this.record(tx, regionId, now, origin, [
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
  createRegion(
    name: string,
    description: string | null,
    allowedCidrs: string[] | null = null,
  ): Promise<IssuedApiKey & { region: Region }> {
    return this.unitOfWork.run(async (tx) => {
      const region = await this.repository.insertRegion(tx, { id: randomUUID(), name });
      // The first key manages the region: a region must keep a key holding keys:write.
      const issued = await this.issueKey(tx, region.id, description, [...PERMISSIONS], allowedCidrs);
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
    const issued = await this.issueKey(tx, region.id, description, [...PERMISSIONS], null, presetKey);
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
    description: string | null,
    permissions: Permission[],
    allowedCidrs: string[] | null,
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
  ): Promise<void> {
    return this.events.insert(
      tx,
      entries.map(([type, apiKey]) => ({ id: randomUUID(), regionId, type, occurredAt, apiKey, ...origin })),
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

const keyOf = (key: Pick<ApiKeyRecord, 'id' | 'tokenPreview'>): EventApiKey => ({
  id: key.id,
  tokenPreview: key.tokenPreview,
});

/** A key with what it may do and from where, for the events that create or roll it. */
const grantOf = (key: ApiKeyRecord): EventApiKey => ({
  ...keyOf(key),
  grant: { permissions: key.permissions, allowedCidrs: key.allowedCidrs },
});

/** What the last-key rule counts (as RegionKeysRepository.countPermanentManagers does in SQL). */
const canManage = (permissions: readonly Permission[], allowedCidrs: readonly string[] | null) =>
  permissions.includes(MANAGE_KEYS) && admitsSomeAddress(allowedCidrs);

const isPermanentManager = (key: ApiKeyRecord) =>
  key.revokesAt === null && canManage(key.permissions, key.allowedCidrs);

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
