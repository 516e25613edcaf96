import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyClientsAndHourlyUsage1764700000000 implements MigrationInterface {
  name = 'KeyClientsAndHourlyUsage1764700000000';

  async up(q: QueryRunner): Promise<void> {
    // A key's requests by UTC hour, added to by each instance's flush with the daily counts;
    // kept about a week (the hourly view shows 168 hours), so a quiet hour shows the same day.
    await q.query(`CREATE TABLE "api_key_hourly_usage" (
      "api_key_id" uuid NOT NULL,
      "hour" TIMESTAMP WITH TIME ZONE NOT NULL,
      "requests" bigint NOT NULL,
      CONSTRAINT "api_key_hourly_usage_pkey" PRIMARY KEY ("api_key_id", "hour"),
      CONSTRAINT "api_key_hourly_usage_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id")
        ON DELETE CASCADE ON UPDATE NO ACTION)`);
    // The daily purge of hours past the week kept.
    await q.query(`CREATE INDEX "api_key_hourly_usage_hour_idx" ON "api_key_hourly_usage" ("hour")`);
    // The clients (address and user agent, '' for none) that used a key, flushed as usage is:
    // counts added, the first and last time each was seen kept. Derived data: it goes with its key.
    await q.query(`CREATE TABLE "api_key_clients" (
      "api_key_id" uuid NOT NULL,
      "address" character varying(64) NOT NULL,
      "user_agent" character varying(200) NOT NULL,
      "first_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "requests" bigint NOT NULL,
      CONSTRAINT "api_key_clients_pkey" PRIMARY KEY ("api_key_id", "address", "user_agent"),
      CONSTRAINT "api_key_clients_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id")
        ON DELETE CASCADE ON UPDATE NO ACTION)`);
    // The daily purge of clients not seen for 30 days.
    await q.query(`CREATE INDEX "api_key_clients_last_seen_at_idx" ON "api_key_clients" ("last_seen_at")`);
    // A roll's two events name each other: the old key's api_key.rolled its replacement (id and
    // preview), the new key's api_key.created the key it replaces. IF NOT EXISTS: see down.
    await q.query(`ALTER TABLE "region_events" ADD COLUMN IF NOT EXISTS "api_key_replaced_by_id" uuid`);
    await q.query(
      `ALTER TABLE "region_events" ADD COLUMN IF NOT EXISTS "api_key_replaced_by_token_preview" character varying(32)`,
    );
    await q.query(`ALTER TABLE "region_events" ADD COLUMN IF NOT EXISTS "api_key_replaces_id" uuid`);
  }

  /**
   * Nothing here restricts a key, so a revert cannot widen one. The counts and clients are
   * derived data and go. The events' links stay: events are never changed, and the older
   * build names its columns on insert and read, so it ignores them; running this migration
   * again finds them in place.
   */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "api_key_clients"`);
    await q.query(`DROP TABLE "api_key_hourly_usage"`);
  }
}
