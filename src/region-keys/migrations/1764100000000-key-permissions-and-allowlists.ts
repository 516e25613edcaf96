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

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_allowed_cidrs"`);
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_permissions"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "allowed_cidrs"`);
    await q.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_permissions_check"`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "permissions"`);
  }
}
