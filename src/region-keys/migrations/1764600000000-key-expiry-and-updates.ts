import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyExpiryAndUpdates1764600000000 implements MigrationInterface {
  name = 'KeyExpiryAndUpdates1764600000000';

  async up(q: QueryRunner): Promise<void> {
    // When a key stops working by itself, as its holder chose (null: never). Checked where
    // keys are looked up, as revokes_at is, so no background job is needed for it to stop.
    await q.query(`ALTER TABLE "api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
    // The key_expiring metric counts active keys by expires_at at each scrape: only the few
    // keys that expire at all are in this index.
    await q.query(
      `CREATE INDEX "api_keys_expiring_idx" ON "api_keys" ("expires_at") WHERE "expires_at" IS NOT NULL AND "revoked_at" IS NULL`,
    );
    // api_key.updated (a PATCH) joins the event types; its changes are what it set, by field.
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_type_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_type_check"
      CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked', 'api_key.updated'))`);
    await q.query(`ALTER TABLE "region_events" ADD "api_key_expires_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(`ALTER TABLE "region_events" ADD "changes" jsonb`);
  }

  /**
   * A rollback never makes a key more powerful: the older build knows no expiry, so a key that
   * has one would become permanent. A key with one that has stopped (expired, or its roll
   * ended) is revoked as of then; while a working key has one, the revert is refused.
   */
  async down(q: QueryRunner): Promise<void> {
    const [{ expiring }] = (await q.query(
      `SELECT count(*)::int AS expiring FROM "api_keys"
        WHERE "expires_at" > now() AND "revoked_at" IS NULL AND ("revokes_at" IS NULL OR "revokes_at" > now())`,
    )) as { expiring: number }[];
    if (expiring > 0) {
      throw new Error(
        `${expiring} active API key(s) have an expiry (expires_at), which the older schema cannot keep: ` +
          'reverting would make them permanent. Revoke them (DELETE /auth/region/api-keys/{id}) or wait until ' +
          'they expire, then revert again. Nothing was changed.',
      );
    }
    const [{ updates }] = (await q.query(
      `SELECT count(*)::int AS updates FROM "region_events" WHERE "type" = 'api_key.updated'`,
    )) as { updates: number }[];
    if (updates > 0) {
      throw new Error(
        `The audit trail holds ${updates} api_key.updated event(s), which the older schema cannot type, and events ` +
          'are never deleted: this migration cannot be reverted. Nothing was changed.',
      );
    }
    // Stopped already, by its expiry or an earlier end of its roll: revoked as of then.
    await q.query(
      `UPDATE "api_keys" SET "revoked_at" = LEAST("expires_at", "revokes_at")
        WHERE "expires_at" IS NOT NULL AND "revoked_at" IS NULL`,
    );
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "changes"`);
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_expires_at"`);
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_type_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_type_check"
      CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked'))`);
    await q.query(`DROP INDEX "api_keys_expiring_idx"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "expires_at"`);
  }
}
