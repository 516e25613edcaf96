import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';

import { generateApiKey } from '../../src/common/auth/api-key-format';

/**
 * docs/api.md tells secret scanners how to recognise a region API key ("Reporting a leaked
 * key"). This reads the facts from the page (alphabet, patterns, the worked example) and
 * checks keys the service issues by following the page's words alone: CRC-32 of the ASCII
 * bytes before the checksum, in base62 with the page's alphabet, most significant digit first,
 * padded with 0 to 6 characters.
 */
const page = readFileSync('docs/api.md', 'utf8');
const section = page.slice(page.indexOf('### Reporting a leaked key'), page.indexOf('## Users and tokens'));

const alphabet = /the base62 alphabet\s+`([0-9A-Za-z]+)`/.exec(section)?.[1] ?? '';
const patterns = Object.fromEntries(
  [...section.matchAll(/^\| (live|sandbox) \| `([^`]+)` \| (\d+) \| `([^`]+)` \|$/gm)].map(
    ([, environment, prefix, length, pattern]) => [environment, { prefix, length: Number(length), pattern }],
  ),
);

function documentedChecksum(before: string): string {
  let n = crc32(Buffer.from(before, 'ascii'));
  let digits = '';
  while (n > 0) {
    digits = alphabet[n % 62] + digits;
    n = Math.floor(n / 62);
  }
  return digits.padStart(6, '0');
}

const isRegionKey = (candidate: string) => documentedChecksum(candidate.slice(0, -6)) === candidate.slice(-6);

it('gives the base62 alphabet and a pattern, prefix and length for each environment', () => {
  expect(alphabet).toHaveLength(62);
  expect(new Set(alphabet).size).toBe(62);
  expect(Object.keys(patterns).sort()).toEqual(['live', 'sandbox']);
});

it.each(['live', 'sandbox'] as const)('describes the %s keys the service issues, checksum included', (environment) => {
  const { prefix, length, pattern } = patterns[environment];
  const whole = new RegExp(`^${pattern}$`);
  for (let i = 0; i < 200; i++) {
    const key = generateApiKey(environment);
    expect({ key, prefix: key.startsWith(prefix), length: key.length, matches: whole.test(key) }).toEqual({
      key,
      prefix: true,
      length,
      matches: true,
    });
    expect({ key, checksum: isRegionKey(key) }).toEqual({ key, checksum: true });
    // One character changed before the checksum: the documented check turns it away.
    const changed = key.slice(0, -7) + (key.at(-7) === 'A' ? 'B' : 'A') + key.slice(-6);
    expect({ changed, checksum: isRegionKey(changed) }).toEqual({ changed, checksum: false });
  }
});

it("keeps the patterns apart: a sandbox key is no live key, whatever a scanner's pattern", () => {
  expect(new RegExp(`^${patterns.live.pattern}$`).test(generateApiKey('sandbox'))).toBe(false);
});

it('works its example as the page says', () => {
  const [, key, count, crc, checksum] =
    /For\s+`(rk_[0-9A-Za-z]+)`[^:]*: the CRC-32 of its\s+first (\d+) characters[^)]*\) is (\d+), which is `([0-9A-Za-z]+)` in base62/.exec(
      section,
    ) ?? [];
  const before = key.slice(0, Number(count));
  expect(key).toBe(before + checksum);
  expect(crc32(Buffer.from(before, 'ascii'))).toBe(Number(crc));
  expect(documentedChecksum(before)).toBe(checksum);
});
