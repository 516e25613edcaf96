import { Logger } from '@nestjs/common';
import { MigrationInterface, QueryRunner } from 'typeorm';

import { canonicalEmail } from '../email';

const BATCH = 1000;

/**
 * Accounts become unique by the canonical form of their email (NFKC, lower-cased, the
 * domain in IDNA ASCII form) instead of lower(email), which let "josé" in NFC and NFD,
 * "bücher.com" and "xn--bcher-kva.com", or fullwidth letters make separate accounts.
 *
 * The canonical form needs UTS #46 (no SQL function does it), so it is computed here with
 * the application's own rule, in batches. Rows whose forms collide: the oldest account keeps
 * the canonical form; the others keep their row and their email, with email_canonical NULL,
 * so they can no longer sign in by email, and their ids are logged for someone to resolve
 * with their owners. The same for rows whose address the rule now refuses (an invisible
 * character, mixed scripts). Nothing is deleted.
 */
export class UsersEmailCanonical1764000001000 implements MigrationInterface {
  name = 'UsersEmailCanonical1764000001000';

  private readonly logger = new Logger(this.name);

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "users" ADD "email_canonical" character varying(254)`);

    const refused: number[] = [];
    let lastId = 0;
    for (;;) {
      const rows = (await q.query(`SELECT id, email FROM "users" WHERE id > $1 ORDER BY id LIMIT ${BATCH}`, [
        lastId,
      ])) as { id: number; email: string }[];
      if (rows.length === 0) break;
      lastId = rows[rows.length - 1].id;
      const ids: number[] = [];
      const forms: string[] = [];
      for (const { id, email } of rows) {
        const canonical = canonicalEmail(email);
        if (canonical === null) refused.push(id);
        else {
          ids.push(id);
          forms.push(canonical);
        }
      }
      if (ids.length > 0) {
        await q.query(
          `UPDATE "users" SET "email_canonical" = v.canonical FROM unnest($1::int[], $2::varchar[]) AS v(id, canonical) WHERE "users".id = v.id`,
          [ids, forms],
        );
      }
    }

    // Oldest first: the first id of each group keeps the canonical form.
    const collisions = (await q.query(
      `SELECT array_agg(id ORDER BY created_at, id) AS ids FROM "users"
       WHERE "email_canonical" IS NOT NULL GROUP BY "email_canonical" HAVING count(*) > 1 ORDER BY min(id)`,
    )) as { ids: number[] }[];
    const setAside = collisions.flatMap(({ ids }) => ids.slice(1));
    if (setAside.length > 0) {
      await q.query(`UPDATE "users" SET "email_canonical" = NULL WHERE id = ANY($1::int[])`, [setAside]);
      const groups = collisions.map(({ ids: [kept, ...others] }) => `${others.join(', ')} (same address as ${kept})`);
      this.logger.warn(
        `${setAside.length} account(s) share their email's canonical form with an older account and can no longer sign in by email ` +
          `(email_canonical is NULL); resolve with their owners. Account ids: ${groups.join('; ')}`,
      );
    }
    if (refused.length > 0) {
      this.logger.warn(
        `${refused.length} account(s) have an email that is now refused (invisible characters, mixed scripts or an invalid domain) ` +
          `and can no longer sign in by email (email_canonical is NULL); resolve with their owners. Account ids: ${refused.join(', ')}`,
      );
    }

    await q.query(`CREATE UNIQUE INDEX "users_email_canonical_key" ON "users" ("email_canonical")`);
    await q.query(`DROP INDEX "users_email_lower_key"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "users_email_canonical_key"`);
    await q.query(`ALTER TABLE "users" DROP COLUMN "email_canonical"`);
    await q.query(`CREATE UNIQUE INDEX "users_email_lower_key" ON "users" (lower("email"))`);
  }
}
