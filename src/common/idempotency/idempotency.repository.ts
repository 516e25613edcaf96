import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

export type ClaimState = 'running' | 'committed' | 'done';

export interface ClaimRow {
  fingerprint: Buffer;
  state: ClaimState;
  answer: Buffer | null;
  /** Its holder may still be at work (and store the answer of what it committed). */
  leaseLive: boolean;
}

// Each new claim removes at most this many expired rows: the table holds about a day's
// keys, swept by the traffic that adds to it, with no timer and no lock.
const SWEEP_PER_CLAIM = 2;

/**
 * The claims of Idempotency-Keys (table idempotency_keys). Times are the database's, so
 * that instances with different clocks agree on leases and expiry.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims the key for `token`, committed on its own before the work starts: a new key, one
   * expired, or one whose holder let its lease run out before its work committed (for the
   * same request only). False when another holds it or has finished with it. Sweeps a few
   * expired rows of other keys in the same statement.
   */
  async claim(keyHash: Buffer, fingerprint: Buffer, token: string, leaseMs: number, ttlMs: number): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `WITH swept AS (
         DELETE FROM idempotency_keys WHERE key_hash IN (
           SELECT key_hash FROM idempotency_keys WHERE expires_at < now() AND key_hash <> $1
           ORDER BY expires_at LIMIT ${SWEEP_PER_CLAIM} FOR UPDATE SKIP LOCKED))
       INSERT INTO idempotency_keys AS k (key_hash, fingerprint, state, token, lease_until, expires_at, answer)
       VALUES ($1, $2, 'running', $3, now() + make_interval(secs => $4), now() + make_interval(secs => $5), NULL)
       ON CONFLICT (key_hash) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, state = 'running', token = EXCLUDED.token,
         lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at, answer = NULL
       WHERE k.expires_at <= now()
          OR (k.state = 'running' AND k.lease_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)
       RETURNING 1`,
      [keyHash, fingerprint, token, leaseMs / 1000, ttlMs / 1000],
    );
    return rows.length === 1;
  }

  async find(keyHash: Buffer): Promise<ClaimRow | null> {
    const rows: ClaimRow[] = await this.dataSource.query(
      `SELECT fingerprint, state, answer, lease_until > now() AS "leaseLive"
         FROM idempotency_keys WHERE key_hash = $1 AND expires_at > now()`,
      [keyHash],
    );
    return rows[0] ?? null;
  }

  /**
   * In the work's own transaction: the claim says the work committed, if `token` still holds
   * it. False when it does not (another took it over): the work must then roll back.
   */
  async markCommitted(manager: EntityManager, keyHash: Buffer, token: string): Promise<boolean> {
    const rows: [unknown[], number] = await manager.query(
      `UPDATE idempotency_keys SET state = 'committed'
        WHERE key_hash = $1 AND token = $2 AND state IN ('running', 'committed') RETURNING 1`,
      [keyHash, token],
    );
    return rows[1] === 1;
  }

  async storeAnswer(keyHash: Buffer, token: string, answer: Buffer): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET state = 'done', answer = $3, token = NULL WHERE key_hash = $1 AND token = $2`,
      [keyHash, token, answer],
    );
  }

  /** Gives the key up, when the work failed before anything of it committed. */
  async release(keyHash: Buffer, token: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys WHERE key_hash = $1 AND token = $2 AND state = 'running'`,
      [keyHash, token],
    );
  }
}
