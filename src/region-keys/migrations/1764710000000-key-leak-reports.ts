import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyLeakReports1764710000000 implements MigrationInterface {
  name = 'KeyLeakReports1764710000000';

  async up(q: QueryRunner): Promise<void> {
    // When a leak of the key was first reported while the last-key rule kept it working (a
    // reported key is otherwise revoked at once): its region should roll it.
    await q.query(`ALTER TABLE "api_keys" ADD "leak_reported_at" TIMESTAMP WITH TIME ZONE`);
    // api_key.leak_reported joins the event types, and a reporter (anyone, with no credentials)
    // the actors: the event's client address is the reporter's.
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_type_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_type_check"
      CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked', 'api_key.updated', 'api_key.leak_reported'))`);
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_actor_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_actor_check"
      CHECK (("actor_type" IN ('operator', 'reporter') AND "actor_api_key_id" IS NULL AND "actor_token_preview" IS NULL)
        OR ("actor_type" = 'api_key' AND "actor_api_key_id" IS NOT NULL AND "actor_token_preview" IS NOT NULL))`);
  }

  /**
   * Revoked keys stay revoked, so a rollback never makes a key more powerful; but the audit
   * trail of a leak report (its events, which are never deleted) cannot be typed by the older
   * schema, so once a leak was reported the revert is refused.
   */
  async down(q: QueryRunner): Promise<void> {
    const [{ reports }] = (await q.query(
      `SELECT count(*)::int AS reports FROM "region_events" WHERE "type" = 'api_key.leak_reported' OR "actor_type" = 'reporter'`,
    )) as { reports: number }[];
    if (reports > 0) {
      throw new Error(
        `The audit trail holds ${reports} event(s) of leak reports, which the older schema cannot type, and events ` +
          'are never deleted: this migration cannot be reverted. Nothing was changed.',
      );
    }
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_actor_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_actor_check"
      CHECK (("actor_type" = 'operator' AND "actor_api_key_id" IS NULL AND "actor_token_preview" IS NULL)
        OR ("actor_type" = 'api_key' AND "actor_api_key_id" IS NOT NULL AND "actor_token_preview" IS NOT NULL))`);
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_type_check"`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_type_check"
      CHECK ("type" IN ('region.created', 'api_key.created', 'api_key.rolled', 'api_key.revoked', 'api_key.updated'))`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "leak_reported_at"`);
  }
}
