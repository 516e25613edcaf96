/** Trims strings; leaves anything else for the validators to reject. */
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** `trim` for each item of an array (tags, names); anything else is left for the validators. */
export const trimEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? value.map((item: unknown) => trim({ value: item })) : value;

/**
 * Query strings are text: whole numbers of any length (with an optional minus, so that -1 is
 * reported as too small rather than as "not a number", and 10^20 as too large) become
 * numbers; anything else stays text and fails @IsInt.
 */
export const toInt = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) return value;
  // Past 308 digits Number() gives Infinity, which @IsInt would call no integer.
  const number = Number(value);
  return Number.isFinite(number) ? number : Math.sign(number) * Number.MAX_VALUE;
};
