import { ValidationFailedError } from '../common/problem/problem';
import type { EventPosition } from './region-events.repository';

// An opaque cursor: base64url of the last listed event's time (milliseconds, as the clock
// writes them) and id. Clients pass it back as given; its content is not part of the API.
const POSITION = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeEventCursor({ occurredAt, id }: EventPosition): string {
  return Buffer.from(`${occurredAt.toISOString()} ${id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; a cursor this service did not hand out is a 400. */
export function decodeEventCursor(cursor: string): EventPosition {
  const match = POSITION.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const occurredAt = match ? new Date(match[1]) : null;
  if (!match || !occurredAt || Number.isNaN(occurredAt.getTime()) || encodeEventCursor({ occurredAt, id: match[2] }) !== cursor) {
    throw new ValidationFailedError([{ field: 'cursor', message: 'cursor must be the meta.next value of a previous page' }]);
  }
  return { occurredAt, id: match[2] };
}
