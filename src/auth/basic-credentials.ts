import { canonicalEmail } from '../users';

export interface BasicCredentials {
  email: string;
  password: string;
}

const BASIC_HEADER = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads `Authorization: Basic base64(email:password)` (RFC 7617): split at the first colon
 * only (an email cannot contain one, a password may, even as its first character), and
 * refused unless it is exact base64 of UTF-8 text. Base64 and UTF-8 are Node's; what is
 * hand-made here is that strictness, which the usual parsers (passport-http, basic-auth)
 * leave out: they decode leniently, and passport-http also splits at every colon.
 */
export function parseBasicAuthorization(header: unknown): BasicCredentials | null {
  if (typeof header !== 'string') return null;
  const encoded = BASIC_HEADER.exec(header)?.[1];
  if (!encoded) return null;
  const bytes = Buffer.from(encoded, 'base64');
  // Node skips characters it cannot decode; re-encoding shows whether any were skipped.
  if (bytes.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return null;
  let decoded: string;
  try {
    decoded = utf8.decode(bytes);
  } catch {
    return null;
  }
  // No account's email or password holds U+0000 (sign-up refuses it), and PostgreSQL text
  // cannot hold it: looking such an email up would fail the request instead of the credentials.
  if (decoded.includes('\u0000')) return null;
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // An address that no account can have (invisible characters, mixed scripts) is refused
  // here like a malformed header: the answer is the same 401 as for wrong credentials.
  const email = canonicalEmail(decoded.slice(0, colon));
  const password = decoded.slice(colon + 1);
  return email && password ? { email, password } : null;
}
