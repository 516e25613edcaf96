/** Trims strings; leaves anything else for the validators to reject. */
export const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** `trim` for each item of an array (tags, names); anything else is left for the validators. */
export const trimEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? value.map((item: unknown) => trim({ value: item })) : value;

/**
 * Query strings are text: whole numbers (with an optional minus, so that -1 is reported as
 * too small rather than as "not a number") become numbers; anything else stays text and
 * fails @IsInt.
 */
export const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
