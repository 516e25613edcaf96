/**
 * The largest PostgreSQL `integer` (int4), the type of every serial id: a larger number
 * cannot name a row, and would fail in SQL rather than find nothing.
 */
export const INT4_MAX = 2_147_483_647;

/** SQL list of allowed values for a CHECK constraint (identical text in entity and migration). */
export const sqlValues = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');
