import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tests a migration on data as the code before it kept it: in one transaction, takes the
 * schema back with `down()`, lets `seed` write the old rows (and check the old schema), then
 * runs `up()` and commits. Anything thrown rolls it all back.
 */
export async function migrateFromOldSchema(
  dataSource: DataSource,
  migration: MigrationInterface,
  seed: (q: QueryRunner) => Promise<void>,
): Promise<void> {
  const q = dataSource.createQueryRunner();
  await q.connect();
  try {
    await q.startTransaction();
    await migration.down(q);
    await seed(q);
    await migration.up(q);
    await q.commitTransaction();
  } catch (err) {
    await q.rollbackTransaction();
    throw err;
  } finally {
    await q.release();
  }
}
