import { ValidationFailedError } from '../common/problem';

// An opaque cursor: base64url of the 16 bytes of the last listed event's id. The id is a
// random UUID the client already sees in the page, so the cursor says nothing about other
// regions (the insertion number that orders events of one millisecond is service-wide and
// would), needs no server secret shared by instances, and survives restarts. The service
// looks the event up in the caller's region, which binds a cursor to its region. Clients
// pass it back as given; its content is not part of the API.
const UUID_BYTES = 16;
const CURSOR = /^[A-Za-z0-9_-]{22}$/;

/** The answer to a cursor that names no event of the caller's region: another region's, or made up. */
export const invalidEventCursor = (): ValidationFailedError =>
  new ValidationFailedError([{ field: 'cursor', message: 'cursor must be the meta.next value of a previous page' }]);

export function encodeEventCursor(eventId: string): string {
  return Buffer.from(eventId.replace(/-/g, ''), 'hex').toString('base64url');
}

/**
 * The id of the event a cursor names, as a canonical UUID (any 16 bytes are one, so the
 * database accepts whatever this returns). A cursor this service could not have handed out
 * is a 400; whether the event exists, in the caller's region, is the service's to check.
 */
export function decodeEventCursor(cursor: string): string {
  if (!CURSOR.test(cursor)) throw invalidEventCursor();
  const bytes = Buffer.from(cursor, 'base64url');
  // 22 characters carry 132 bits: a cursor whose 4 spare bits are set is not one we made.
  if (bytes.length !== UUID_BYTES || bytes.toString('base64url') !== cursor) throw invalidEventCursor();
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
