/**
 * Region API keys are meant to be recognisable (`rk_` or `rk_test_` + base62, as secret scanners expect),
 * so a key that a client put where it does not belong (in the URL path, or as its request
 * id) can be found and blanked before a log line is written. Sixteen characters after the
 * prefix are far fewer than any key has, and far more than any route of ours uses.
 *
 * A path may spell any character percent-encoded (`rk%5F…`, `%72k_…`, `%255F` encoded twice),
 * and the key is still the key: each character is matched in either spelling, hex digits in
 * either case.
 */
const spelled = (literal: string, hexes: string) => `(?:${literal}|%(?:25)*(?:${hexes}))`;
const hexOf = (char: string) =>
  char
    .charCodeAt(0)
    .toString(16)
    .split('')
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');
const word = (text: string) => [...text].map((char) => spelled(char, hexOf(char))).join('');
// Base62 as %XX: 0-9 (30-39), A-Z (41-5A), a-z (61-7A).
const BASE62 = spelled('[0-9A-Za-z]', '3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]');
const KEY_SHAPED = new RegExp(`${word('rk_')}(${word('test_')})?${BASE62}{16,}`, 'g');

export const looksLikeKey = (text: string): boolean => {
  KEY_SHAPED.lastIndex = 0;
  return KEY_SHAPED.test(text);
};

/** `text` with every key-shaped run replaced by `rk_[redacted]` (`rk_test_[redacted]` for a sandbox key). */
export const scrubKeys = (text: string): string =>
  // Most text holds no `rk_` and no `%` at all; the search costs a fraction of the replace (run on every request line).
  text.includes('rk_') || text.includes('%')
    ? text.replace(KEY_SHAPED, (_, test: string | undefined) => (test ? 'rk_test_[redacted]' : 'rk_[redacted]'))
    : text;
