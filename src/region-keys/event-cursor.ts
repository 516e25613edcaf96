import { ValidationFailedError } from '../common/problem/problem';
import type { EventPosition } from './region-events.repository';

// An opaque cursor: base64url of the last listed event's time (milliseconds, as the clock
// writes them) and insertion number. Clients pass it back as given; its content is not
// part of the API.
const POSITION = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) ([1-9]\d{0,18})$/;

export function encodeEventCursor({ occurredAt, seq }: EventPosition): string {
  return Buffer.from(`${occurredAt.toISOString()} ${seq}`, 'utf8').toString('base64url');
}

/** The position a cursor names; a cursor this service did not hand out is a 400. */
export function decodeEventCursor(cursor: string): EventPosition {
  const match = POSITION.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const occurredAt = match ? new Date(match[1]) : null;
  // Re-encoding must give the cursor back: base64url decoding skips characters it does not know.
  if (!match || !occurredAt || Number.isNaN(occurredAt.getTime()) || encodeEventCursor({ occurredAt, seq: match[2] }) !== cursor) {
    throw new ValidationFailedError([{ field: 'cursor', message: 'cursor must be the meta.next value of a previous page' }]);
  }
  return { occurredAt, seq: match[2] };
}
