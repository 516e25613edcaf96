import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { ApiKey } from './entities/api-key.entity';
import { Region } from './entities/region.entity';

export interface ActiveKeyLookup {
  id: string;
  regionId: string;
  lastUsedAt: Date | null;
}


export type NewApiKey = Pick<ApiKey, 'id' | 'regionId' | 'tokenHash' | 'tokenPreview' | 'description'>;

/**
 * All SQL of the region-keys feature. Methods that take an EntityManager are meant to run
 * inside the caller's transaction; the others use the pool.
 */
@Injectable()
export class RegionKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** One indexed lookup; the hot path of every request with a region API key. */
  findActiveKeyByHash(tokenHash: string): Promise<ActiveKeyLookup | null> {
    return this.dataSource.getRepository(ApiKey).findOne({
      select: { id: true, regionId: true, lastUsedAt: true },
      where: { tokenHash, revokedAt: IsNull() },
    });
  }

  /**
   * Sets lastUsedAt unless another request (on any instance) already did since `staleBefore`.
   */
  async touchLastUsed(keyId: string, now: Date, staleBefore: Date): Promise<void> {
    await this.dataSource
      .createQueryBuilder()
      .update(ApiKey)
      .set({ lastUsedAt: now, updatedAt: () => '"updated_at"' })
      .where('id = :keyId', { keyId })
      .andWhere('(last_used_at IS NULL OR last_used_at < :staleBefore)', { staleBefore })
      .execute();
  }

  /**
   * The region and its active keys, oldest first, in one query: a LEFT JOIN, so a region
   * whose keys are all revoked still comes back (with none).
   */
  async findRegionWithActiveKeys(regionId: string): Promise<{ region: Region; apiKeys: ApiKey[] } | null> {
    const rows = await this.dataSource
      .getRepository(Region)
      .createQueryBuilder('region')
      .leftJoinAndMapMany('region.apiKeys', ApiKey, 'key', 'key.region_id = region.id AND key.revoked_at IS NULL')
      .where('region.id = :regionId', { regionId })
      .orderBy('key.created_at', 'ASC')
      .addOrderBy('key.id', 'ASC')
      .getOne();
    if (!rows) return null;
    const { apiKeys, ...region } = rows as Region & { apiKeys: ApiKey[] };
    return { region: Object.assign(new Region(), region), apiKeys };
  }

  listRegions(): Promise<Region[]> {
    return this.dataSource.getRepository(Region).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  async hasAnyRegion(manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    return (await manager.getRepository(Region).count({ take: 1 })) > 0;
  }

  /** A transaction-scoped advisory lock held while the first region is made at start. */
  async lockFirstRegionCreation(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.firstRegion]);
  }

  /**
   * SELECT ... FOR UPDATE on the region row alone (no joins: PostgreSQL refuses FOR UPDATE
   * on the nullable side of an outer join). Every change to a region's set of keys takes
   * this lock first, so such changes to one region run one after another.
   */
  lockRegion(manager: EntityManager, regionId: string): Promise<Region | null> {
    return manager.getRepository(Region).findOne({ where: { id: regionId }, lock: { mode: 'pessimistic_write' } });
  }

  countActiveKeys(manager: EntityManager, regionId: string): Promise<number> {
    return manager.getRepository(ApiKey).countBy({ regionId, revokedAt: IsNull() });
  }

  findActiveKeyInRegion(manager: EntityManager, keyId: string, regionId: string): Promise<ApiKey | null> {
    return manager.getRepository(ApiKey).findOneBy({ id: keyId, regionId, revokedAt: IsNull() });
  }

  async revokeKey(manager: EntityManager, keyId: string, at: Date): Promise<void> {
    await manager.getRepository(ApiKey).update({ id: keyId, revokedAt: IsNull() }, { revokedAt: at });
  }

  insertKey(manager: EntityManager, key: NewApiKey): Promise<ApiKey> {
    const repo = manager.getRepository(ApiKey);
    return repo.save(repo.create({ ...key, lastUsedAt: null, revokedAt: null }));
  }

  insertRegion(manager: EntityManager, region: Pick<Region, 'id' | 'name'>): Promise<Region> {
    const repo = manager.getRepository(Region);
    return repo.save(repo.create(region));
  }
}

