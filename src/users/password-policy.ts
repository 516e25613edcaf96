/**
 * bcrypt reads at most 72 bytes and ignores the rest, so a longer password would be
 * accepted on its first 72 bytes alone. Longer ones are refused, never cut. Bytes, not
 * characters: "€" is one character and three bytes.
 */
export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;
