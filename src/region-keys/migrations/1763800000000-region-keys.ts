import { MigrationInterface, QueryRunner } from 'typeorm';

export class RegionKeys1763800000000 implements MigrationInterface {
  name = 'RegionKeys1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "regions" (
      "id" uuid NOT NULL,
      "name" character varying(100) NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "regions_pkey" PRIMARY KEY ("id"))`);
    await q.query(`CREATE TABLE "api_keys" (
      "id" uuid NOT NULL,
      "region_id" uuid NOT NULL,
      "token_hash" character(64) NOT NULL,
      "token_preview" character varying(32) NOT NULL,
      "description" character varying(255),
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "last_used_at" TIMESTAMP WITH TIME ZONE,
      "revoked_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"))`);
    // Authentication looks a key up by its hash on every request.
    await q.query(`CREATE UNIQUE INDEX "api_keys_token_hash_key" ON "api_keys" ("token_hash")`);
    // Listing and counting a region's active keys (the last-key rule) use this one.
    await q.query(
      `CREATE INDEX "api_keys_active_by_region_idx" ON "api_keys" ("region_id", "created_at") WHERE "revoked_at" IS NULL`,
    );
    await q.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_region_id_fkey" FOREIGN KEY ("region_id") REFERENCES "regions"("id") ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "api_keys"`);
    await q.query(`DROP TABLE "regions"`);
  }
}
