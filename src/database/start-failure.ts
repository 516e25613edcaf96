/** What a failed start of the database says: one line, naming the cause and what to check. */

const TLS_VERIFICATION = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS/;

/** The error's own message, or its code when it has none (a connect to several addresses fails with an AggregateError). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  if (err.message) return err.message;
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner[0] instanceof Error) return describeError(inner[0]);
  return typeof code === 'string' ? code : err.name;
}

/** Whether `err` is a TLS certificate that failed verification (Node's codes for it). */
export function isTlsVerificationError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TLS_VERIFICATION.test(code);
}

/**
 * The error a start fails with: the same, unless it is about TLS, where node-postgres and
 * Node's own words leave the operator guessing which setting is wrong.
 */
export function startFailure(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (isTlsVerificationError(err)) {
    return new Error(
      `The database's TLS certificate failed verification (${err.message}): check sslrootcert in DATABASE_URL ` +
        '(the CA that signed the server certificate) and, for verify-full, the host name',
    );
  }
  if (err.message === 'The server does not support SSL connections') {
    return new Error(
      'The database does not accept TLS, and DATABASE_URL asks for it (sslmode): remove sslmode or enable TLS on the server',
    );
  }
  if (code === 'ENOENT' && 'path' in err) {
    return new Error(`DATABASE_URL: sslrootcert file ${String(err.path)} cannot be read`);
  }
  return err;
}
