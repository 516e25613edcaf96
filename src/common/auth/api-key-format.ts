import { randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The format of region API keys: `rk_` + 43 base62 characters carrying 256 random bits
 * + 6 base62 characters of CRC32 over everything before them. The prefix lets secret
 * scanners recognise a leaked key; the checksum lets the server turn away a mistyped or
 * made-up key without touching the database. Shared: the region keys issue and check
 * keys, and the configuration checks an operator-chosen first key against the same rule.
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

/**
 * True for a key this service could have issued; cheap, and needs no database. A key with
 * the `rk_` prefix must be a generated one, checksum included; any other is an operator's.
 */
export function isWellFormedApiKey(key: string): boolean {
  if (key.startsWith(API_KEY_PREFIX)) {
    if (!GENERATED_KEY.test(key)) return false;
    const body = key.slice(0, -CHECKSUM_LENGTH);
    const expected = Buffer.from(checksumOf(body));
    return timingSafeEqual(expected, Buffer.from(key.slice(-CHECKSUM_LENGTH)));
  }
  return OPERATOR_KEY.test(key);
}
