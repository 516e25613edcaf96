/**
 * Region API keys are meant to be recognisable (`rk_` or `rk_test_` + base62, as secret scanners expect),
 * so a key that a client put where it does not belong (in the URL path, or as its request
 * id) can be found and blanked before a log line is written. Sixteen characters after the
 * prefix are far fewer than any key has, and far more than any route of ours uses.
 */
const KEY_SHAPED = /rk_(test_)?[0-9A-Za-z]{16,}/g;

export const looksLikeKey = (text: string): boolean => {
  KEY_SHAPED.lastIndex = 0;
  return KEY_SHAPED.test(text);
};

/** `text` with every key-shaped run replaced by `rk_[redacted]` (`rk_test_[redacted]` for a sandbox key). */
export const scrubKeys = (text: string): string =>
  // Most text holds no `rk_` at all; the search costs a fraction of the replace (run on every request line).
  text.includes('rk_') ? text.replace(KEY_SHAPED, 'rk_$1[redacted]') : text;
