import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyRollAndRegionEvents1763900000000 implements MigrationInterface {
  name = 'KeyRollAndRegionEvents1763900000000';

  async up(q: QueryRunner): Promise<void> {
    // When a rolled key stops working by itself; null: never. Checked where keys are looked
    // up, so no background job is needed for a key to stop at its time.
    await q.query(`ALTER TABLE "api_keys" ADD "revokes_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(`CREATE TABLE "region_events" (
      "id" uuid NOT NULL,
      -- Insertion order: orders events of the same millisecond (the two of a roll, say).
      "seq" bigint GENERATED ALWAYS AS IDENTITY,
      "region_id" uuid NOT NULL,
      "type" character varying(32) NOT NULL,
      "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "actor_type" character varying(16) NOT NULL,
      "actor_api_key_id" uuid,
      "actor_token_preview" character varying(32),
      "api_key_id" uuid NOT NULL,
      "api_key_token_preview" character varying(32) NOT NULL,
      "api_key_revokes_at" TIMESTAMP WITH TIME ZONE,
      "client_address" character varying(64),
      "request_id" character varying(128),
      CONSTRAINT "region_events_pkey" PRIMARY KEY ("id"),
      CONSTRAINT "region_events_type_check"
        CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked')),
      CONSTRAINT "region_events_actor_check" CHECK (
        ("actor_type" = 'operator' AND "actor_api_key_id" IS NULL AND "actor_token_preview" IS NULL)
        OR ("actor_type" = 'api_key' AND "actor_api_key_id" IS NOT NULL AND "actor_token_preview" IS NOT NULL)),
      CONSTRAINT "region_events_region_id_fkey" FOREIGN KEY ("region_id") REFERENCES "regions"("id")
        ON DELETE RESTRICT ON UPDATE NO ACTION)`);
    // The listing: a region's events newest first, resumed after a (occurred_at, seq) cursor.
    await q.query(
      `CREATE INDEX "region_events_by_region_newest_idx" ON "region_events" ("region_id", "occurred_at" DESC, "seq" DESC)`,
    );
    // An audit trail that the application could rewrite would prove little: rows are only
    // ever inserted.
    await q.query(`CREATE FUNCTION "region_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'region_events is append-only';
      END $$`);
    await q.query(`CREATE TRIGGER "region_events_append_only" BEFORE UPDATE OR DELETE ON "region_events"
      FOR EACH ROW EXECUTE FUNCTION "region_events_append_only"()`);
  }

  /**
   * A rollback never makes a key more powerful: the older build knows no scheduled stop, so a
   * rolled key would work for ever. One past its time is revoked as of then (it already works no
   * more); while a key is still scheduled to stop, the revert is refused.
   */
  async down(q: QueryRunner): Promise<void> {
    const [{ scheduled }] = (await q.query(
      `SELECT count(*)::int AS scheduled FROM "api_keys" WHERE "revokes_at" > now() AND "revoked_at" IS NULL`,
    )) as { scheduled: number }[];
    if (scheduled > 0) {
      throw new Error(
        `${scheduled} active API key(s) are scheduled to stop (revokes_at, after a roll), which the older schema ` +
          'cannot keep: reverting would make them permanent. Revoke them (DELETE /auth/region/api-keys/{id}) or ' +
          'wait until they stop, then revert again. Nothing was changed.',
      );
    }
    await q.query(
      `UPDATE "api_keys" SET "revoked_at" = "revokes_at" WHERE "revokes_at" IS NOT NULL AND "revoked_at" IS NULL`,
    );
    await q.query(`DROP TABLE "region_events"`);
    await q.query(`DROP FUNCTION "region_events_append_only"()`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "revokes_at"`);
  }
}
