import { MigrationInterface, QueryRunner } from 'typeorm';

export class RegionEventRateLimits1764730000000 implements MigrationInterface {
  name = 'RegionEventRateLimits1764730000000';

  async up(q: QueryRunner): Promise<void> {
    // With the grant of the events that create or roll a key: its own rate limit, or JSON null for
    // the region default. SQL NULL: nothing recorded (other events, and those written before).
    await q.query(`ALTER TABLE "region_events" ADD "api_key_rate_limit" jsonb`);
    await q.query(`ALTER TABLE "region_events" ADD CONSTRAINT "region_events_rate_limit_check"
      CHECK (jsonb_typeof("api_key_rate_limit") IN ('null', 'object'))`);
  }

  /**
   * The events then read as those written before this change: the grant's rate limit not
   * recorded, never a wrong one. The keys keep their limits (api_keys); only the trail loses
   * what it said of them.
   */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "region_events" DROP CONSTRAINT "region_events_rate_limit_check"`);
    await q.query(`ALTER TABLE "region_events" DROP COLUMN "api_key_rate_limit"`);
  }
}
