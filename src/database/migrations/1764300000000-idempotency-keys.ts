import { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1764300000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764300000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per Idempotency-Key and caller, looked up by a hash of both (never the key
    // itself). A claim is committed as `running` before the work; the work's own transaction
    // turns it `committed`; the encrypted answer makes it `done`.
    await q.query(`CREATE TABLE "idempotency_keys" (
      "key_hash" bytea NOT NULL,
      "fingerprint" bytea NOT NULL,
      "state" text NOT NULL,
      "token" uuid,
      "lease_until" TIMESTAMP WITH TIME ZONE NOT NULL,
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "answer" bytea,
      CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("key_hash"),
      CONSTRAINT "idempotency_keys_state_check" CHECK ("state" IN ('running', 'committed', 'done')))`);
    // The sweep of expired rows, a few at a time with each new claim.
    await q.query(`CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "idempotency_keys"`);
  }
}
