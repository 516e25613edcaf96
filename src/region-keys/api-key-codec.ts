import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The format of region API keys: `rk_` + 43 base62 characters carrying 256 random bits
 * + 6 base62 characters of CRC32 over everything before them. The prefix lets secret
 * scanners recognise a leaked key; the checksum lets the server turn away a mistyped or
 * made-up key without touching the database.
 */
export const API_KEY_PREFIX = 'rk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 43; // 62^43 > 2^256
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
const GENERATED_KEY = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
// Keys an operator chose (INITIAL_REGION_API_KEY) need not be generated ones, but they
// are at least 32 printable ASCII characters; anything else cannot be a key of ours.
const OPERATOR_KEY = /^[\x21-\x7e]{32,256}$/;

function toBase62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out.padStart(width, '0');
}

function checksumOf(body: string): string {
  return toBase62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

export function generateApiKey(): string {
  const random = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), RANDOM_LENGTH);
  const body = API_KEY_PREFIX + random;
  return body + checksumOf(body);
}

/** True for a key this service could have issued; cheap, and needs no database. */
export function isWellFormedApiKey(key: string): boolean {
  if (key.startsWith(API_KEY_PREFIX)) {
    if (!GENERATED_KEY.test(key)) return false;
    const body = key.slice(0, -CHECKSUM_LENGTH);
    const expected = Buffer.from(checksumOf(body));
    return timingSafeEqual(expected, Buffer.from(key.slice(-CHECKSUM_LENGTH)));
  }
  return OPERATOR_KEY.test(key);
}

/** What is stored: keys carry 256 bits of entropy, so a fast hash is enough (no bcrypt). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A short, non-secret reminder of which key this is: first 8, an ellipsis, last 4. */
export function previewApiKey(key: string): string {
  return `${key.slice(0, 8)}\u2026${key.slice(-4)}`;
}
