import type { IncomingMessage } from 'node:http';

import { IDEMPOTENCY_KEY_HEADER, malformedIdempotencyKey } from './idempotency.errors';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const HEADER = IDEMPOTENCY_KEY_HEADER.toLowerCase();
// A Structured Fields string (RFC 9651): printable ASCII, with \" and \\ escaped.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
// Stripe's form: the key as it is, visible ASCII only.
const BARE = /^[\x21\x23-\x7e]+$/;

/**
 * The Idempotency-Key a request carries, or undefined when it has none. The draft's form (an
 * sf-string, `"…"`) and Stripe's bare token are both taken, and name the same key. Anything
 * else is refused with a 400 naming the header, so that a client never believes a request
 * is protected when it is not.
 */
export function idempotencyKeyOf(raw: IncomingMessage): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < raw.rawHeaders.length; i += 2) {
    if (raw.rawHeaders[i].toLowerCase() === HEADER) values.push(raw.rawHeaders[i + 1]);
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) throw malformedIdempotencyKey('Send the header once.');
  const value = values[0].trim();
  const quoted = SF_STRING.exec(value);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : BARE.test(value) ? value : undefined;
  if (key === undefined) {
    throw malformedIdempotencyKey(
      'Send a quoted string ("…") or a bare token of printable ASCII characters, without control characters.',
    );
  }
  if (key.length === 0) throw malformedIdempotencyKey('The key is empty.');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    throw malformedIdempotencyKey(`The key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
  return key;
}
