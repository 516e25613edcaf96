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

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "changes"`);
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_expires_at"`);
    // The trail is append-only: a down migration cannot drop the events it no longer types,
    // so it refuses while there are any.
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_type_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_type_check"
      CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked'))`);
    await q.query(`DROP INDEX "api_keys_expiring_idx"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "expires_at"`);
  }
}
