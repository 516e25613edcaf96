import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyPermissionsAndAllowlists1764100000000 implements MigrationInterface {
  name = 'KeyPermissionsAndAllowlists1764100000000';

  async up(q: QueryRunner): Promise<void> {
    // Keys issued before permissions existed could do everything, from anywhere: they keep
    // exactly that. The default serves this backfill only; every insert says what it grants.
    await q.query(
      `ALTER TABLE "api_keys" ADD "permissions" text[] NOT NULL DEFAULT ARRAY['region:read', 'keys:write']::text[]`,
    );
    await q.query(`ALTER TABLE "api_keys" ALTER COLUMN "permissions" DROP DEFAULT`);
    await q.query(`ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_permissions_check"
      CHECK ("permissions" <@ ARRAY['region:read', 'keys:write']::text[] AND cardinality("permissions") > 0)`);
    // Null: any address.
    await q.query(`ALTER TABLE "api_keys" ADD "allowed_cidrs" text[]`);
    // What a created (or rolled) key was granted; null on events that grant nothing, and on
    // events recorded before this migration.
    await q.query(`ALTER TABLE "region_events" ADD "api_key_permissions" text[]`);
    await q.query(`ALTER TABLE "region_events" ADD "api_key_allowed_cidrs" text[]`);
  }

  /**
   * A rollback never makes a key more powerful: without these columns every key may do
   * everything from anywhere. Refused while a key that still works has fewer permissions or an
   * allowlist.
   */
  async down(q: QueryRunner): Promise<void> {
    const [{ limited }] = (await q.query(
      `SELECT count(*)::int AS limited FROM "api_keys"
        WHERE "revoked_at" IS NULL AND ("revokes_at" IS NULL OR "revokes_at" > now())
          AND (NOT "permissions" @> ARRAY['region:read', 'keys:write']::text[] OR "allowed_cidrs" IS NOT NULL)`,
    )) as { limited: number }[];
    if (limited > 0) {
      throw new Error(
        `${limited} active API key(s) have limited permissions or an address allowlist (allowed_cidrs), which the ` +
          'older schema cannot keep: reverting would let them do everything from any address. Revoke them ' +
          '(DELETE /auth/region/api-keys/{id}), then revert again. Nothing was changed.',
      );
    }
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_allowed_cidrs"`);
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_permissions"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "allowed_cidrs"`);
    await q.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_permissions_check"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "permissions"`);
  }
}
