import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Galaxy's `physicalProperties` take measurements beyond mass, radius, gravity and
 * temperature (its `additionalProperties: number`): they are kept whole, as a JSON object
 * of numbers, beside the typed columns. Existing planets have none.
 */
export class PlanetExtraMeasurements1764500000000 implements MigrationInterface {
  name = 'PlanetExtraMeasurements1764500000000';

  async up(q: QueryRunner): Promise<void> {
    // The default fills the existing rows, and stays: during a rolling upgrade, instances of
    // the build before this one still insert planets without the column.
    await q.query(`ALTER TABLE "planets" ADD "extra_measurements" jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "planets" DROP COLUMN "extra_measurements"`);
  }
}
