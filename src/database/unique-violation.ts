import { QueryFailedError } from 'typeorm';

const UNIQUE_VIOLATION = '23505';

/**
 * Whether a failed statement broke the named unique constraint or index. Inserting and
 * catching this, rather than a SELECT before, lets the index decide between two racing
 * writes: exactly one succeeds.
 */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  if (!(err instanceof QueryFailedError)) return false;
  const driverError = err.driverError as { code?: string; constraint?: string };
  return driverError.code === UNIQUE_VIOLATION && driverError.constraint === constraint;
}
