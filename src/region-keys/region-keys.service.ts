import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { RowLockGate } from '../database/row-lock-gate';
import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from './api-key-codec';
import { Region } from './entities/region.entity';
import { ApiKeyLimitError, ApiKeyNotFoundError, LastApiKeyError, RegionNotFoundError } from './region-keys.errors';
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
  /**
   * The caller's region with its active keys, read by the same query that accepted the
   * key (as of that moment, for this request only: nothing outlives the request).
   */
  region: RegionWithKeys;
}

/** A key just created: the row, and the secret that exists only in this one response. */
export interface IssuedApiKey {
  apiKey: ApiKeyRecord;
  key: string;
}

@Injectable()
export class RegionKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: RegionKeysRepository,
    private readonly config: AppConfig,
    private readonly rowLocks: RowLockGate,
  ) {}

  /**
   * Resolves a presented key to its region, or null. Malformed keys never reach the
   * database. One query finds the key and reads its region with the region's keys. No
   * result is cached, so a revoked key stops working at once everywhere.
   */
  async authenticate(presentedKey: string): Promise<RegionPrincipal | null> {
    if (!isWellFormedApiKey(presentedKey)) return null;
    const found = await this.repository.findActiveKeyWithRegion(hashApiKey(presentedKey));
    if (!found) return null;
    await this.recordUse(found);
    const { apiKeyId, region, apiKeys } = found;
    return { regionId: region.id, apiKeyId, region: { region, apiKeys } };
  }

  listRegions(): Promise<Region[]> {
    return this.repository.listRegions();
  }

  createKey(regionId: string, description: string | null): Promise<IssuedApiKey> {
    return this.rowLocks.transaction(`region:${regionId}`, async (manager) => {
      if (!(await this.repository.lockRegion(manager, regionId))) throw new RegionNotFoundError(regionId);
      const limit = this.config.MAX_API_KEYS_PER_REGION;
      if ((await this.repository.countActiveKeys(manager, regionId)) >= limit) throw new ApiKeyLimitError(limit);
      return this.issueKey(manager, regionId, description);
    });
  }

  /**
   * Revokes a key unless it is the region's last active one. The region row is locked
   * before counting, so concurrent revocations of one region's keys (from any number of
   * instances) queue on that lock and each counts what the previous one committed; within
   * one instance they queue before taking a connection (RowLockGate).
   */
  async revokeKey(regionId: string, keyId: string): Promise<void> {
    await this.rowLocks.transaction(`region:${regionId}`, async (manager) => {
      await this.repository.lockRegion(manager, regionId);
      if (!(await this.repository.hasActiveKeyInRegion(manager, keyId, regionId))) throw new ApiKeyNotFoundError();
      if ((await this.repository.countActiveKeys(manager, regionId)) <= 1) throw new LastApiKeyError();
      await this.repository.revokeKey(manager, keyId, new Date());
    });
  }

  /** Creates a region with its first key. For operators (CLI, first start), not for HTTP. */
  createRegion(name: string, description: string | null): Promise<IssuedApiKey & { region: Region }> {
    return this.dataSource.transaction(async (manager) => {
      const region = await this.repository.insertRegion(manager, { id: randomUUID(), name });
      const issued = await this.issueKey(manager, region.id, description);
      return { region, ...issued };
    });
  }

  /**
   * Creates a region with its first key only if the database has no region yet. Instances
   * starting together on an empty database serialise on a lock, so only one creates it.
   * Resolves to null when there already was a region.
   */
  createFirstRegion(name: string, description: string, presetKey?: string): Promise<(IssuedApiKey & { region: Region }) | null> {
    return this.dataSource.transaction(async (manager) => {
      await this.repository.lockFirstRegionCreation(manager);
      if (await this.repository.hasAnyRegion(manager)) return null;
      const region = await this.repository.insertRegion(manager, { id: randomUUID(), name });
      return { region, ...(await this.issueKey(manager, region.id, description, presetKey)) };
    });
  }

  async hasAnyRegion(): Promise<boolean> {
    return this.repository.hasAnyRegion();
  }

  private async issueKey(
    manager: EntityManager,
    regionId: string,
    description: string | null,
    presetKey?: string,
  ): Promise<IssuedApiKey> {
    const key = presetKey ?? generateApiKey();
    const apiKey = await this.repository.insertKey(manager, {
      id: randomUUID(),
      regionId,
      tokenHash: hashApiKey(key),
      tokenPreview: previewApiKey(key),
      description,
    });
    return { apiKey, key };
  }

  /** Moves lastUsedAt at most once per resolution period; the answer shows the time written. */
  private async recordUse(found: KeyWithRegion): Promise<void> {
    const now = new Date();
    const staleBefore = new Date(now.getTime() - this.config.API_KEY_LAST_USED_RESOLUTION_SECONDS * 1000);
    if (found.lastUsedAt && found.lastUsedAt >= staleBefore) return;
    const written = await this.repository.touchLastUsed(found.apiKeyId, now, staleBefore);
    const presented = found.apiKeys.find((key) => key.id === found.apiKeyId);
    if (written && presented) presented.lastUsedAt = written;
  }
}
