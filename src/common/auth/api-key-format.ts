import { randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The format of region API keys: a prefix naming the environment (`rk_` live, `rk_test_`
 * sandbox) + 43 base62 characters carrying 256 random bits + 6 base62 characters of CRC32
 * over everything before them, prefix included. The prefix lets secret scanners recognise a
 * leaked key and tell a test key from a live one; the checksum lets the server turn away a
 * mistyped or made-up key without touching the database. Shared: the region keys issue and
 * check keys, and the configuration checks an operator-chosen first key against the same rule.
 */
export const API_ENVIRONMENTS = ['live', 'sandbox'] as const;
export type ApiEnvironment = (typeof API_ENVIRONMENTS)[number];

export const API_KEY_PREFIX = 'rk_';
export const SANDBOX_API_KEY_PREFIX = 'rk_test_';
export const API_KEY_PREFIXES: Record<ApiEnvironment, string> = {
  live: API_KEY_PREFIX,
  sandbox: SANDBOX_API_KEY_PREFIX,
};

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 43; // 62^43 > 2^256
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
// The random part is base62, so it never holds the `_` of `rk_test_`: every rk_ key has one
// environment, told by its prefix alone.
const GENERATED_KEY: Record<ApiEnvironment, RegExp> = {
  live: new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`),
  sandbox: new RegExp(`^${SANDBOX_API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`),
};
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

export function generateApiKey(environment: ApiEnvironment = 'live'): string {
  const random = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), RANDOM_LENGTH);
  const body = API_KEY_PREFIXES[environment] + random;
  return body + checksumOf(body);
}

/** The environment an `rk_` key claims by its prefix; null for any other value (an operator's key). */
export function claimedEnvironmentOf(key: string): ApiEnvironment | null {
  if (key.startsWith(SANDBOX_API_KEY_PREFIX)) return 'sandbox';
  if (key.startsWith(API_KEY_PREFIX)) return 'live';
  return null;
}

function isGeneratedKey(key: string, environment: ApiEnvironment): boolean {
  if (!GENERATED_KEY[environment].test(key)) return false;
  const expected = Buffer.from(checksumOf(key.slice(0, -CHECKSUM_LENGTH)));
  return timingSafeEqual(expected, Buffer.from(key.slice(-CHECKSUM_LENGTH)));
}

/**
 * The environment of a key this service could have issued in either environment (format and
 * checksum right); null for anything else, operators' keys included. For telling a caller
 * that the key is good but meant for the other environment.
 */
export function generatedKeyEnvironment(key: string): ApiEnvironment | null {
  const claimed = claimedEnvironmentOf(key);
  return claimed !== null && isGeneratedKey(key, claimed) ? claimed : null;
}

/**
 * True for a key this service could have issued in `environment`; cheap, and needs no
 * database. A key with an `rk_` prefix must be a generated one of that environment,
 * checksum included; any other is an operator's, valid in both.
 */
export function isWellFormedApiKey(key: string, environment: ApiEnvironment = 'live'): boolean {
  const claimed = claimedEnvironmentOf(key);
  if (claimed === null) return OPERATOR_KEY.test(key);
  return claimed === environment && isGeneratedKey(key, environment);
}
