import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import type { UtcDay } from './utc-day';

export interface UsageCount {
  apiKeyId: string;
  day: UtcDay;
  requests: number;
}

// Every pending count of an instance in one statement, added to what other instances wrote.
// Rows go in key order, so two instances flushing the same keys at once lock them in the same
// order and never deadlock. Counts of a key deleted meanwhile (a sandbox reset) are dropped
// instead of failing the whole batch on the foreign key.
const ADD_COUNTS = `
  INSERT INTO api_key_usage (api_key_id, day, requests)
  SELECT u.api_key_id, u.day, u.requests
    FROM unnest($1::uuid[], $2::date[], $3::bigint[]) AS u(api_key_id, day, requests)
   WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.api_key_id)
   ORDER BY u.api_key_id, u.day
  ON CONFLICT (api_key_id, day) DO UPDATE SET requests = api_key_usage.requests + EXCLUDED.requests`;

/** All SQL of per-key usage. Plain SQL on the pool: none of it belongs to a transaction. */
@Injectable()
export class KeyUsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  async addCounts(counts: UsageCount[]): Promise<void> {
    const sorted = [...counts].sort((a, b) =>
      a.apiKeyId < b.apiKeyId ? -1 : a.apiKeyId > b.apiKeyId ? 1 : a.day < b.day ? -1 : 1,
    );
    await this.dataSource.query(ADD_COUNTS, [
      sorted.map((c) => c.apiKeyId),
      sorted.map((c) => c.day),
      sorted.map((c) => c.requests),
    ]);
  }

  /** Revoked keys included: their history stays readable until it ages out. */
  async keyExistsInRegion(apiKeyId: string, regionId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM api_keys WHERE id = $1 AND region_id = $2', [
      apiKeyId,
      regionId,
    ]);
    return rows.length > 0;
  }

  /** The stored counts of a key from `from` to `to` (both included), by day. */
  async listDaily(apiKeyId: string, from: UtcDay, to: UtcDay): Promise<Map<UtcDay, number>> {
    const rows: { day: string; requests: string | number }[] = await this.dataSource.query(
      `SELECT day::text AS day, requests FROM api_key_usage WHERE api_key_id = $1 AND day BETWEEN $2::date AND $3::date`,
      [apiKeyId, from, to],
    );
    return new Map(rows.map((row) => [row.day, Number(row.requests)]));
  }

  async deleteBefore(day: UtcDay): Promise<void> {
    await this.dataSource.query('DELETE FROM api_key_usage WHERE day < $1::date', [day]);
  }
}
