/**
 * Database errors that say "try again shortly", not "this request is wrong" or "the code
 * is broken": the client gets a 503 with Retry-After instead of a 500.
 */
export interface DatabaseFault {
  detail: string;
  retryAfterSeconds: number;
}

const BUSY: DatabaseFault = { detail: 'The database is busy; retry the request shortly.', retryAfterSeconds: 1 };
/** The database cannot be reached (or is shutting down, or starting). */
export const DATABASE_UNAVAILABLE: DatabaseFault = {
  detail: 'The database is unavailable; retry the request shortly.',
  retryAfterSeconds: 5,
};

// lock_not_available (lock_timeout), query_canceled (statement_timeout),
// serialization_failure, deadlock_detected.
const BUSY_SQLSTATES = new Set(['55P03', '57014', '40001', '40P01']);
// admin_shutdown (pg_terminate_backend, a server stopping), crash_shutdown,
// cannot_connect_now (starting up), too_many_connections, and class 08 (connection exception).
const UNAVAILABLE_SQLSTATES = /^(57P0[123]|53300|08...)$/;
// The socket to the server failed.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
// node-postgres reports these without a code: a connection that ended or never came up
// within connectionTimeoutMillis, no pooled connection free within it, a reply that did not
// come within query_timeout.
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout$|Client has encountered a connection error|Client was closed)/;

// TypeORM releases a transaction's query runner when its connection fails; the transaction's
// next statement then fails with this instead of the connection's own error.
const DRIVER_ERROR_NAMES = new Set(['QueryRunnerAlreadyReleasedError', 'QueryRunnerProviderAlreadyReleasedError']);

type ErrorLike = {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  errors?: unknown;
  cause?: unknown;
};

/** What to tell the client when `err` (or what it wraps) is a transient database fault; else null. */
export function databaseFault(err: unknown, depth = 0): DatabaseFault | null {
  if (!err || typeof err !== 'object' || depth > 3) return null;
  const { name, code, message, driverError, errors, cause } = err as ErrorLike;
  if (typeof code === 'string') {
    if (BUSY_SQLSTATES.has(code)) return BUSY;
    if (UNAVAILABLE_SQLSTATES.test(code) || NETWORK_CODES.has(code)) return DATABASE_UNAVAILABLE;
  }
  if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return DATABASE_UNAVAILABLE;
  if (typeof name === 'string' && DRIVER_ERROR_NAMES.has(name)) return DATABASE_UNAVAILABLE;
  // TypeORM wraps the driver's error; a connect to a name with several addresses fails with
  // an AggregateError of one error per address.
  for (const inner of [driverError, cause, ...(Array.isArray(errors) ? (errors as unknown[]) : [])]) {
    const fault = databaseFault(inner, depth + 1);
    if (fault) return fault;
  }
  return null;
}
