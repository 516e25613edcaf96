import { MigrationInterface, QueryRunner } from 'typeorm';

export class ApiKeyUsage1764200000000 implements MigrationInterface {
  name = 'ApiKeyUsage1764200000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per key and UTC day, added to by each instance's flush (at most once a minute);
    // the primary key is what the flush's ON CONFLICT adds to, and what a key's history is
    // read by. Usage is derived data: it goes with its key.
    await q.query(`CREATE TABLE "api_key_usage" (
      "api_key_id" uuid NOT NULL,
      "day" date NOT NULL,
      "requests" bigint NOT NULL,
      CONSTRAINT "api_key_usage_pkey" PRIMARY KEY ("api_key_id", "day"),
      CONSTRAINT "api_key_usage_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id")
        ON DELETE CASCADE ON UPDATE NO ACTION)`);
    // The daily purge of days past the 90 kept.
    await q.query(`CREATE INDEX "api_key_usage_day_idx" ON "api_key_usage" ("day")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "api_key_usage"`);
  }
}
