import { MigrationInterface, QueryRunner } from 'typeorm';

export class DatabaseEnvironment1764300000500 implements MigrationInterface {
  name = 'DatabaseEnvironment1764300000500';

  async up(q: QueryRunner): Promise<void> {
    // At most one row (the key can only be true): which environment the database serves. It
    // is written by the first server that starts on the database, not here: a migration does
    // not know the environment, and the test templates are migrated once for both.
    await q.query(`CREATE TABLE "database_environment" (
      "only_row" boolean NOT NULL DEFAULT true,
      "environment" text NOT NULL,
      "stamped_at" timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT "database_environment_pkey" PRIMARY KEY ("only_row"),
      CONSTRAINT "database_environment_only_row_check" CHECK ("only_row"),
      CONSTRAINT "database_environment_environment_check" CHECK ("environment" IN ('live', 'sandbox')))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "database_environment"`);
  }
}
