import type { ApiEnvironment } from '../common/auth';

/** A DataSource, or an EntityManager inside a transaction. */
interface Queryable {
  query<T>(sql: string, parameters?: unknown[]): Promise<T>;
}

/** The database is stamped for the other environment: nothing of it is opened for use. */
export class WrongEnvironmentError extends Error {
  constructor(stamp: ApiEnvironment, configured: ApiEnvironment) {
    super(
      `This database is stamped ${stamp}, and this configuration is ${configured} (API_ENVIRONMENT=${configured}): ` +
        `refusing to use it. Check DATABASE_URL (or DATA_DIR): a ${configured} deployment needs its own database.`,
    );
    this.name = 'WrongEnvironmentError';
  }
}

/**
 * The environment the database is stamped for, or null when it is not stamped yet (no server
 * has started on it since the stamp's migration, or the migration has not run).
 */
export async function environmentStampOf(db: Queryable): Promise<ApiEnvironment | null> {
  const [table] = await db.query<{ exists: boolean }[]>(
    `SELECT to_regclass('database_environment') IS NOT NULL AS "exists"`,
  );
  if (!table.exists) return null;
  const [row] = await db.query<{ environment: ApiEnvironment }[]>('SELECT environment FROM database_environment');
  return row?.environment ?? null;
}

/** Throws WrongEnvironmentError when the database is stamped for an environment other than `configured`. */
export async function refuseOtherEnvironment(db: Queryable, configured: ApiEnvironment): Promise<void> {
  const stamp = await environmentStampOf(db);
  if (stamp !== null && stamp !== configured) throw new WrongEnvironmentError(stamp, configured);
}

/**
 * Stamps an unstamped database for `configured` (the first server to start on it decides;
 * two starting at once cannot both write), then refuses it if the stamp is another's. Returns
 * whether this call wrote the stamp.
 */
export async function stampEnvironment(db: Queryable, configured: ApiEnvironment): Promise<boolean> {
  const inserted = await db.query<unknown[]>(
    `INSERT INTO database_environment (environment) VALUES ($1) ON CONFLICT (only_row) DO NOTHING RETURNING environment`,
    [configured],
  );
  if (inserted.length === 0) await refuseOtherEnvironment(db, configured);
  return inserted.length > 0;
}
