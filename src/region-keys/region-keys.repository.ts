import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { ADVISORY_LOCKS, managerOf, type Transaction } from '../database';
import { ApiKey } from './entities/api-key.entity';
import { Region } from './entities/region.entity';
import type { KeyRateLimit } from './key-rate-limit';
import { type Permission, SELF_MANAGING } from './permissions';

/** A key as its region's holders see it (never its hash); its own rate limit, or null for the region default. */
export type ApiKeyRecord = { rateLimit: KeyRateLimit | null } & Pick<
  ApiKey,
  | 'id'
  | 'description'
  | 'tokenPreview'
  | 'createdAt'
  | 'updatedAt'
  | 'lastUsedAt'
  | 'revokesAt'
  | 'expiresAt'
  | 'permissions'
  | 'allowedCidrs'
  | 'leakReportedAt'
>;

export type RegionRecord = Pick<Region, 'id' | 'name' | 'createdAt' | 'updatedAt'>;

/** An active key found by its hash, with its region and the region's active keys. */
export interface KeyWithRegion {
  apiKeyId: string;
  tokenPreview: string;
  lastUsedAt: Date | null;
  permissions: Permission[];
  allowedCidrs: string[] | null;
  rateLimit: KeyRateLimit | null;
  region: RegionRecord;
  /** Oldest first; the key itself is among them. */
  apiKeys: ApiKeyRecord[];
}

export type NewApiKey = Pick<
  ApiKey,
  'id' | 'regionId' | 'tokenHash' | 'tokenPreview' | 'description' | 'permissions' | 'allowedCidrs' | 'expiresAt'
> &
  Pick<ApiKeyRecord, 'rateLimit'>;

/** What a PATCH may change on a key; what is absent stays as it is. */
export type ApiKeyChanges = Partial<
  Pick<ApiKey, 'description' | 'permissions' | 'allowedCidrs' | 'expiresAt'> & Pick<ApiKeyRecord, 'rateLimit'>
>;

/** A key's two rate-limit columns (of the table `alias`, when given) as one value: null when the key has none of its own. */
const rateLimitOf = (alias?: string) => {
  const [requests, perSeconds] = ['rate_limit_requests', 'rate_limit_per_seconds'].map((c) =>
    alias ? `${alias}.${c}` : c,
  );
  return `CASE WHEN ${requests} IS NULL THEN NULL ELSE json_build_object('requests', ${requests}, 'perSeconds', ${perSeconds}) END`;
};

const API_KEY_COLUMNS = `id, description, token_preview AS "tokenPreview", created_at AS "createdAt", updated_at AS "updatedAt",
  last_used_at AS "lastUsedAt", revokes_at AS "revokesAt", expires_at AS "expiresAt", permissions,
  allowed_cidrs AS "allowedCidrs", ${rateLimitOf()} AS "rateLimit", leak_reported_at AS "leakReportedAt"`;

/**
 * A key that authenticates at the time given as parameter `at`: not revoked, not past a
 * scheduled revocation (a roll's), and not past its expiry. The time comes from the service's clock, not from the database's
 * now(), so that every instance and every test goes by the same notion of time.
 */
const activeAt = (alias: string, at: string) =>
  `${alias}.revoked_at IS NULL AND (${alias}.revokes_at IS NULL OR ${alias}.revokes_at > ${at})
   AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > ${at})`;

// The presented key by its hash (unique index), its region (primary key) and the region's
// active keys (partial index on region_id, created_at): one round trip, every row one key
// of the region. An inner join is enough: the presented key is one of the active keys.
// A key past its revokesAt or expiresAt is refused and no longer listed, by this same query. The
// presented key's permissions and allowlist come with it, so checking them costs no query.
const KEY_WITH_REGION = `
  SELECT presented.id AS "presentedId", presented.token_preview AS "presentedTokenPreview",
         presented.last_used_at AS "presentedLastUsedAt", presented.permissions AS "presentedPermissions",
         presented.allowed_cidrs AS "presentedAllowedCidrs", ${rateLimitOf('presented')} AS "presentedRateLimit",
         region.id AS "regionId", region.name AS "regionName", region.created_at AS "regionCreatedAt",
         region.updated_at AS "regionUpdatedAt",
         key.id, key.description, key.token_preview AS "tokenPreview", key.created_at AS "createdAt",
         key.updated_at AS "updatedAt", key.last_used_at AS "lastUsedAt", key.revokes_at AS "revokesAt",
         key.expires_at AS "expiresAt", key.permissions, key.allowed_cidrs AS "allowedCidrs",
         ${rateLimitOf('key')} AS "rateLimit", key.leak_reported_at AS "leakReportedAt"
    FROM api_keys presented
    JOIN regions region ON region.id = presented.region_id
    JOIN api_keys key ON key.region_id = presented.region_id AND ${activeAt('key', '$2')}
   WHERE presented.token_hash = $1 AND ${activeAt('presented', '$2')}
   ORDER BY key.created_at, key.id`;

interface KeyWithRegionRow extends ApiKeyRecord {
  presentedId: string;
  presentedTokenPreview: string;
  presentedLastUsedAt: Date | null;
  presentedPermissions: Permission[];
  presentedAllowedCidrs: string[] | null;
  presentedRateLimit: KeyRateLimit | null;
  regionId: string;
  regionName: string;
  regionCreatedAt: Date;
  regionUpdatedAt: Date;
}

/**
 * All SQL of the region-keys feature. Methods that take a Transaction run inside the
 * caller's transaction; the others use the pool. The reads and writes of
 * requests are plain SQL returning plain objects; TypeORM's query building and entity
 * hydration cost more than the queries themselves on these paths.
 */
@Injectable()
export class RegionKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The hot path of every request with a region API key. */
  async findActiveKeyWithRegion(tokenHash: string, now: Date): Promise<KeyWithRegion | null> {
    const rows: KeyWithRegionRow[] = await this.dataSource.query(KEY_WITH_REGION, [tokenHash, now]);
    if (rows.length === 0) return null;
    const [first] = rows;
    return {
      apiKeyId: first.presentedId,
      tokenPreview: first.presentedTokenPreview,
      lastUsedAt: first.presentedLastUsedAt,
      permissions: first.presentedPermissions,
      allowedCidrs: first.presentedAllowedCidrs,
      rateLimit: first.presentedRateLimit,
      region: {
        id: first.regionId,
        name: first.regionName,
        createdAt: first.regionCreatedAt,
        updatedAt: first.regionUpdatedAt,
      },
      apiKeys: rows.map(
        ({
          id,
          description,
          tokenPreview,
          createdAt,
          updatedAt,
          lastUsedAt,
          revokesAt,
          expiresAt,
          permissions,
          allowedCidrs,
          rateLimit,
          leakReportedAt,
        }) => ({
          id,
          description,
          tokenPreview,
          createdAt,
          updatedAt,
          lastUsedAt,
          revokesAt,
          expiresAt,
          permissions,
          allowedCidrs,
          rateLimit,
          leakReportedAt,
        }),
      ),
    };
  }

  /**
   * Sets lastUsedAt unless another request (on any instance) already did since
   * `staleBefore`. Resolves to the time written, or null when there was nothing to do.
   */
  async touchLastUsed(keyId: string, now: Date, staleBefore: Date): Promise<Date | null> {
    const [rows]: [{ lastUsedAt: Date }[], number] = await this.dataSource.query(
      `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)
       RETURNING last_used_at AS "lastUsedAt"`,
      [keyId, now, staleBefore],
    );
    return rows[0]?.lastUsedAt ?? null;
  }

  listRegions(): Promise<Region[]> {
    return this.dataSource.getRepository(Region).find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  async regionExists(regionId: string): Promise<boolean> {
    return this.dataSource.getRepository(Region).existsBy({ id: regionId });
  }

  async hasAnyRegion(tx?: Transaction): Promise<boolean> {
    return (await managerOf(tx, this.dataSource).getRepository(Region).count({ take: 1 })) > 0;
  }

  /**
   * Whether any key, revoked ones included, was issued with a generated live key: its stored
   * preview is `rk_` + five base62 characters, where a sandbox key's is `rk_test_`.
   */
  async hasLiveGeneratedKey(tx: Transaction): Promise<boolean> {
    const rows: unknown[] = await managerOf(tx).query(
      `SELECT 1 FROM api_keys WHERE token_preview ~ '^rk_[0-9A-Za-z]{5}\u2026' LIMIT 1`,
    );
    return rows.length > 0;
  }

  /** A transaction-scoped advisory lock held while the first region is made at start. */
  async lockFirstRegionCreation(tx: Transaction): Promise<void> {
    await managerOf(tx).query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.firstRegion]);
  }

  /**
   * SELECT ... FOR UPDATE on the region row alone (no joins: PostgreSQL refuses FOR UPDATE
   * on the nullable side of an outer join). Every change to a region's set of keys takes
   * this lock first, so such changes to one region run one after another. Null when the
   * region does not exist.
   */
  async lockRegion(tx: Transaction, regionId: string): Promise<Pick<Region, 'id' | 'name'> | null> {
    const rows: Pick<Region, 'id' | 'name'>[] = await managerOf(tx).query(
      'SELECT id, name FROM regions WHERE id = $1 FOR UPDATE',
      [regionId],
    );
    return rows[0] ?? null;
  }

  /** Keys that authenticate at `now`, those scheduled to stop later included. */
  async countActiveKeys(tx: Transaction, regionId: string, now: Date): Promise<number> {
    const [{ count }]: [{ count: number }] = await managerOf(tx).query(
      `SELECT count(*)::int AS count FROM api_keys key WHERE key.region_id = $1 AND ${activeAt('key', '$2')}`,
      [regionId, now],
    );
    return count;
  }

  /**
   * Keys that will keep working (not revoked, not scheduled to be, and not expiring), may read
   * the region and manage its keys (SELF_MANAGING), and can be used from some address (no
   * allowlist, or a non-empty one: see admitsSomeAddress).
   */
  async countPermanentManagers(tx: Transaction, regionId: string): Promise<number> {
    const [{ count }]: [{ count: number }] = await managerOf(tx).query(
      `SELECT count(*)::int AS count FROM api_keys
        WHERE region_id = $1 AND revoked_at IS NULL AND revokes_at IS NULL AND expires_at IS NULL
          AND permissions @> $2::text[]
          AND (allowed_cidrs IS NULL OR cardinality(allowed_cidrs) > 0)`,
      [regionId, SELF_MANAGING],
    );
    return count;
  }

  async findActiveKeyInRegion(
    tx: Transaction,
    keyId: string,
    regionId: string,
    now: Date,
  ): Promise<ApiKeyRecord | null> {
    const rows: ApiKeyRecord[] = await managerOf(tx).query(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys key WHERE key.id = $1 AND key.region_id = $2 AND ${activeAt('key', '$3')}`,
      [keyId, regionId, now],
    );
    return rows[0] ?? null;
  }

  /**
   * The active keys, of any region, among those whose hash is in `tokenHashes`: one query on
   * the unique index of hashes, whatever the number of hashes or matches.
   */
  async findActiveKeysByHashes(tokenHashes: string[], now: Date): Promise<Pick<ApiKey, 'id' | 'regionId'>[]> {
    return this.dataSource.query(
      `SELECT key.id, key.region_id AS "regionId" FROM api_keys key
        WHERE key.token_hash = ANY($1::char(64)[]) AND ${activeAt('key', '$2')}
        ORDER BY key.region_id, key.id`,
      [tokenHashes, now],
    );
  }

  /** Active keys of every region that a leak report flagged (see flagLeakReported), first reported first. */
  async listLeakFlaggedKeys(now: Date): Promise<(ApiKeyRecord & { regionId: string })[]> {
    return this.dataSource.query(
      `SELECT ${API_KEY_COLUMNS}, region_id AS "regionId" FROM api_keys key
        WHERE key.leak_reported_at IS NOT NULL AND ${activeAt('key', '$1')}
        ORDER BY key.leak_reported_at, key.id`,
      [now],
    );
  }

  /** Marks a key whose leak was reported but which the last-key rule keeps; the first report's time stays. */
  async flagLeakReported(tx: Transaction, keyId: string, at: Date): Promise<void> {
    await managerOf(tx).query(
      `UPDATE api_keys SET leak_reported_at = $2, updated_at = $2 WHERE id = $1 AND leak_reported_at IS NULL`,
      [keyId, at],
    );
  }

  async revokeKey(tx: Transaction, keyId: string, at: Date): Promise<void> {
    await managerOf(tx).query(
      'UPDATE api_keys SET revoked_at = $2, updated_at = $2 WHERE id = $1 AND revoked_at IS NULL',
      [keyId, at],
    );
  }

  /**
   * Sets the time the key stops by itself; `revokedAt` is set too when that time is now
   * (a roll that revokes the old key at once, as a DELETE would).
   */
  async scheduleRevocation(
    tx: Transaction,
    keyId: string,
    revokesAt: Date,
    revokedAt: Date | null,
    now: Date,
  ): Promise<void> {
    await managerOf(tx).query('UPDATE api_keys SET revokes_at = $2, revoked_at = $3, updated_at = $4 WHERE id = $1', [
      keyId,
      revokesAt,
      revokedAt,
      now,
    ]);
  }

  async insertKey(tx: Transaction, key: NewApiKey): Promise<ApiKeyRecord> {
    const [row]: [ApiKeyRecord] = await managerOf(tx).query(
      `INSERT INTO api_keys (id, region_id, token_hash, token_preview, description, permissions, allowed_cidrs, expires_at,
         rate_limit_requests, rate_limit_per_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       RETURNING ${API_KEY_COLUMNS}`,
      [
        key.id,
        key.regionId,
        key.tokenHash,
        key.tokenPreview,
        key.description,
        key.permissions,
        key.allowedCidrs,
        key.expiresAt,
        key.rateLimit?.requests ?? null,
        key.rateLimit?.perSeconds ?? null,
      ],
    );
    return row;
  }

  /** Sets the fields given (at least one), and updatedAt; answers with the key as it is now. */
  async updateKey(tx: Transaction, keyId: string, changes: ApiKeyChanges, now: Date): Promise<ApiKeyRecord> {
    const { rateLimit, ...rest } = changes;
    const columns = {
      description: 'description',
      permissions: 'permissions',
      allowedCidrs: 'allowed_cidrs',
      expiresAt: 'expires_at',
    };
    const fields = (Object.keys(columns) as (keyof typeof rest)[]).filter((field) => rest[field] !== undefined);
    const values: unknown[] = fields.map((field) => rest[field]);
    const sets = fields.map((field) => columns[field]);
    if (rateLimit !== undefined) {
      sets.push('rate_limit_requests', 'rate_limit_per_seconds');
      values.push(rateLimit?.requests ?? null, rateLimit?.perSeconds ?? null);
    }
    const [rows]: [ApiKeyRecord[], number] = await managerOf(tx).query(
      `UPDATE api_keys SET updated_at = $2, ${sets.map((column, i) => `${column} = $${i + 3}`).join(', ')}
        WHERE id = $1 RETURNING ${API_KEY_COLUMNS}`,
      [keyId, now, ...values],
    );
    return rows[0];
  }

  /**
   * Active keys of all regions that expire before `until`: one count on the partial index of
   * expiring keys, read at each scrape of the metrics.
   */
  async countKeysExpiringBefore(now: Date, until: Date): Promise<number> {
    const [{ count }]: [{ count: number }] = await this.dataSource.query(
      `SELECT count(*)::int AS count FROM api_keys key
        WHERE key.expires_at IS NOT NULL AND key.revoked_at IS NULL AND key.expires_at <= $2 AND ${activeAt('key', '$1')}`,
      [now, until],
    );
    return count;
  }

  insertRegion(tx: Transaction, region: Pick<Region, 'id' | 'name'>): Promise<Region> {
    const repo = managerOf(tx).getRepository(Region);
    return repo.save(repo.create(region));
  }
}
