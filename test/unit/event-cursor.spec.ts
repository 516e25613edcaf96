import fc from 'fast-check';

import { ValidationFailedError } from '../../src/common/problem/problem';
import { decodeEventCursor, encodeEventCursor } from '../../src/region-keys/event-cursor';
import { nastyString } from '../support/hostile-input';
import { propertyRuns } from '../support/property-runs';

/** What PostgreSQL's uuid type takes without complaint, in the form it prints. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BIGINT_MAX = 2n ** 63n - 1n;

/** The cursors this service once handed out: base64url of "<ISO time> <insertion number>". */
const oldStyleCursor = fc
  .tuple(
    fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
    fc.oneof(
      fc.bigInt({ min: 1n, max: BIGINT_MAX }),
      fc.bigInt({ min: BIGINT_MAX + 1n, max: 10n ** 30n }),
      fc.constant(9999999999999999999n),
    ),
  )
  .map(([time, seq]) => Buffer.from(`${time.toISOString()} ${seq}`, 'utf8').toString('base64url'));

/** Any bytes, encoded as a cursor is: some are 16 long, as an event id is. */
const encodedBytes = fc
  .oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ maxLength: 40 }))
  .map((bytes) => Buffer.from(bytes).toString('base64url'));

const base64urlText = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/='),
  maxLength: 30,
});

/** Decodes, and fails the property on anything but a usable id or the cursor's validation error. */
function decodeOrRefuse(cursor: string): string {
  try {
    const id = decodeEventCursor(cursor);
    expect(id).toMatch(CANONICAL_UUID);
    return id;
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationFailedError);
    expect((err as ValidationFailedError).errors).toEqual([{ field: 'cursor', message: expect.any(String) }]);
    return 'refused';
  }
}

describe('event cursors', () => {
  it('decode arbitrary strings to a canonical UUID or a 400 naming cursor, nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(nastyString, base64urlText, fc.string({ unit: 'binary', maxLength: 300 })), (cursor) => {
        decodeOrRefuse(cursor);
      }),
      propertyRuns(2000),
    );
  });

  it('decode arbitrary encoded values, old-style (time, sequence) cursors past the bigint range included, likewise', () => {
    fc.assert(
      fc.property(fc.oneof(oldStyleCursor, encodedBytes), (cursor) => {
        const decoded = decodeOrRefuse(cursor);
        // A decoded cursor is exactly the id it was made from: re-encoding gives it back.
        if (decoded !== 'refused') expect(encodeEventCursor(decoded)).toBe(cursor);
      }),
      propertyRuns(2000),
    );
  });

  it('refuse the cursors of the old format, which named a service-wide sequence number', () => {
    const probe = Buffer.from('2026-11-22T10:00:00.000Z 9999999999999999999').toString('base64url');
    expect(() => decodeEventCursor(probe)).toThrow(ValidationFailedError);
  });

  it('give back the event id they were made from, and nothing readable', () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        const cursor = encodeEventCursor(id);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(decodeEventCursor(cursor)).toBe(id);
      }),
      propertyRuns(500),
    );
  });

  it('refuse a cursor whose spare bits are set (the same bytes, not the cursor handed out)', () => {
    const cursor = encodeEventCursor('5f2d8c1e-93a7-4b0e-8c6a-2e4b7d9f1a03');
    expect(cursor).toBe('Xy2MHpOnSw6Mai5LfZ8aAw');
    expect(() => decodeEventCursor('Xy2MHpOnSw6Mai5LfZ8aAx')).toThrow(ValidationFailedError);
  });
});
