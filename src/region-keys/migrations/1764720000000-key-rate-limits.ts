import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyRateLimits1764720000000 implements MigrationInterface {
  name = 'KeyRateLimits1764720000000';

  async up(q: QueryRunner): Promise<void> {
    // A key's own rate limit, both or neither (null: the region default, REGION_KEY_RATE_LIMIT).
    await q.query(`ALTER TABLE "api_keys" ADD "rate_limit_requests" integer`);
    await q.query(`ALTER TABLE "api_keys" ADD "rate_limit_per_seconds" integer`);
    await q.query(`ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_rate_limit_check"
      CHECK (("rate_limit_requests" IS NULL) = ("rate_limit_per_seconds" IS NULL)
        AND "rate_limit_requests" BETWEEN 1 AND 100000 AND "rate_limit_per_seconds" BETWEEN 1 AND 3600)`);
  }

  /**
   * A rollback never makes a key more powerful: the older build counts no key's requests, so a
   * key given a rate limit of its own would lose it. While a working key has one, the revert is
   * refused; keys that have stopped (revoked, past their roll's end or their expiry) lose nothing.
   */
  async down(q: QueryRunner): Promise<void> {
    const [{ limited }] = (await q.query(
      `SELECT count(*)::int AS limited FROM "api_keys"
        WHERE "rate_limit_requests" IS NOT NULL AND "revoked_at" IS NULL
          AND ("revokes_at" IS NULL OR "revokes_at" > now()) AND ("expires_at" IS NULL OR "expires_at" > now())`,
    )) as { limited: number }[];
    if (limited > 0) {
      throw new Error(
        `${limited} active API key(s) have a rate limit of their own (rateLimit), which the older schema cannot keep: ` +
          'reverting would let them make any number of requests. Revoke them (DELETE /auth/region/api-keys/{id}), or ' +
          'set their rateLimit to null if unlimited requests are acceptable for them, then revert again. Nothing was changed.',
      );
    }
    await q.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_rate_limit_check"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "rate_limit_per_seconds"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "rate_limit_requests"`);
  }
}
