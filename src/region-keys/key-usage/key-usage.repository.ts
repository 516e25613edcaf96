import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import type { ClientCount } from './key-clients';
import type { UtcDay } from './utc-day';
import type { UtcHour } from './utc-hour';

export interface UsageCount {
  apiKeyId: string;
  day: UtcDay;
  requests: number;
}

export interface HourlyCount {
  apiKeyId: string;
  hour: UtcHour;
  requests: number;
}

// Every pending count and client of an instance in one statement, added to what other
// instances wrote: a flush is written whole or not at all, and retried whole. Rows go in key
// order, so two instances flushing the same keys at once lock them in the same order and
// never deadlock. Counts of a key deleted meanwhile (a sandbox reset) are dropped instead of
// failing the whole batch on the foreign key.
const ADD_COUNTS = `
  WITH daily AS (
    INSERT INTO api_key_usage (api_key_id, day, requests)
    SELECT u.api_key_id, u.day, u.requests
      FROM unnest($1::uuid[], $2::date[], $3::bigint[]) AS u(api_key_id, day, requests)
     WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.api_key_id)
     ORDER BY u.api_key_id, u.day
    ON CONFLICT (api_key_id, day) DO UPDATE SET requests = api_key_usage.requests + EXCLUDED.requests
  ), hourly AS (
    INSERT INTO api_key_hourly_usage (api_key_id, hour, requests)
    SELECT u.api_key_id, u.hour, u.requests
      FROM unnest($4::uuid[], $5::timestamptz[], $6::bigint[]) AS u(api_key_id, hour, requests)
     WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = u.api_key_id)
     ORDER BY u.api_key_id, u.hour
    ON CONFLICT (api_key_id, hour) DO UPDATE SET requests = api_key_hourly_usage.requests + EXCLUDED.requests
  )
  INSERT INTO api_key_clients (api_key_id, address, user_agent, first_seen_at, last_seen_at, requests)
  SELECT c.api_key_id, c.address, c.user_agent, c.first_seen_at, c.last_seen_at, c.requests
    FROM unnest($7::uuid[], $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[], $12::bigint[])
         AS c(api_key_id, address, user_agent, first_seen_at, last_seen_at, requests)
   WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = c.api_key_id)
   ORDER BY c.api_key_id, c.address, c.user_agent
  ON CONFLICT (api_key_id, address, user_agent) DO UPDATE SET
    first_seen_at = LEAST(api_key_clients.first_seen_at, EXCLUDED.first_seen_at),
    last_seen_at = GREATEST(api_key_clients.last_seen_at, EXCLUDED.last_seen_at),
    requests = api_key_clients.requests + EXCLUDED.requests`;

// A key's clients past the most recent `$2` go (reading at most those of the keys just flushed).
const KEEP_RECENT_CLIENTS = `
  DELETE FROM api_key_clients c
   USING (SELECT api_key_id, address, user_agent,
                 row_number() OVER (PARTITION BY api_key_id ORDER BY last_seen_at DESC, requests DESC) AS rank
            FROM api_key_clients WHERE api_key_id = ANY($1::uuid[])) r
   WHERE c.api_key_id = r.api_key_id AND c.address = r.address AND c.user_agent = r.user_agent AND r.rank > $2`;

// The key's most recent clients, and those this instance is about to add to (whose totals
// must include what is stored however far down the list they are).
const LIST_CLIENTS = `
  (SELECT address, user_agent AS "userAgent", first_seen_at AS "firstSeenAt", last_seen_at AS "lastSeenAt", requests
     FROM api_key_clients WHERE api_key_id = $1 AND last_seen_at >= $2
    ORDER BY last_seen_at DESC LIMIT $3)
  UNION
  (SELECT address, user_agent, first_seen_at, last_seen_at, requests
     FROM api_key_clients WHERE api_key_id = $1 AND last_seen_at >= $2
      AND (address, user_agent) IN (SELECT * FROM unnest($4::text[], $5::text[])))`;

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

const byKeyThen =
  <T extends { apiKeyId: string }>(rest: (a: T, b: T) => number) =>
  (a: T, b: T) =>
    a.apiKeyId < b.apiKeyId ? -1 : a.apiKeyId > b.apiKeyId ? 1 : rest(a, b);

/** All SQL of per-key usage. Plain SQL on the pool: none of it belongs to a transaction. */
@Injectable()
export class KeyUsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  async addCounts(daily: UsageCount[], hourly: HourlyCount[] = [], clients: ClientCount[] = []): Promise<void> {
    const days = [...daily].sort(byKeyThen((a, b) => (a.day < b.day ? -1 : 1)));
    const hours = [...hourly].sort(byKeyThen((a, b) => a.hour - b.hour));
    const pairs = [...clients].sort(
      byKeyThen((a, b) =>
        a.address < b.address ? -1 : a.address > b.address ? 1 : a.userAgent < b.userAgent ? -1 : 1,
      ),
    );
    await this.dataSource.query(ADD_COUNTS, [
      days.map((c) => c.apiKeyId),
      days.map((c) => c.day),
      days.map((c) => c.requests),
      hours.map((c) => c.apiKeyId),
      hours.map((c) => iso(c.hour)),
      hours.map((c) => c.requests),
      pairs.map((c) => c.apiKeyId),
      pairs.map((c) => c.address),
      pairs.map((c) => c.userAgent),
      pairs.map((c) => iso(c.firstSeenAt)),
      pairs.map((c) => iso(c.lastSeenAt)),
      pairs.map((c) => c.requests),
    ]);
  }

  async keepRecentClients(apiKeyIds: string[], perKey: number): Promise<void> {
    await this.dataSource.query(KEEP_RECENT_CLIENTS, [apiKeyIds, perKey]);
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

  /** The stored counts of a key from `from` to `to` (both included), by hour. */
  async listHourly(apiKeyId: string, from: UtcHour, to: UtcHour): Promise<Map<UtcHour, number>> {
    const rows: { hour: Date; requests: string | number }[] = await this.dataSource.query(
      `SELECT hour, requests FROM api_key_hourly_usage WHERE api_key_id = $1 AND hour BETWEEN $2 AND $3`,
      [apiKeyId, iso(from), iso(to)],
    );
    return new Map(rows.map((row) => [new Date(row.hour).getTime(), Number(row.requests)]));
  }

  /**
   * The key's stored clients seen since `since`: the `limit` most recent, and any of `also`
   * (address and user agent pairs) wherever they stand.
   */
  async listClients(
    apiKeyId: string,
    since: number,
    limit: number,
    also: { address: string; userAgent: string }[],
  ): Promise<ClientCount[]> {
    const rows: { address: string; userAgent: string; firstSeenAt: Date; lastSeenAt: Date; requests: string }[] =
      await this.dataSource.query(LIST_CLIENTS, [
        apiKeyId,
        iso(since),
        limit,
        also.map((c) => c.address),
        also.map((c) => c.userAgent),
      ]);
    return rows.map((row) => ({
      apiKeyId,
      address: row.address,
      userAgent: row.userAgent,
      firstSeenAt: new Date(row.firstSeenAt).getTime(),
      lastSeenAt: new Date(row.lastSeenAt).getTime(),
      requests: Number(row.requests),
    }));
  }

  async deleteBefore(day: UtcDay): Promise<void> {
    await this.dataSource.query('DELETE FROM api_key_usage WHERE day < $1::date', [day]);
  }

  async deleteHoursBefore(hour: UtcHour): Promise<void> {
    await this.dataSource.query('DELETE FROM api_key_hourly_usage WHERE hour < $1', [iso(hour)]);
  }

  async deleteClientsSeenBefore(at: number): Promise<void> {
    await this.dataSource.query('DELETE FROM api_key_clients WHERE last_seen_at < $1', [iso(at)]);
  }
}
