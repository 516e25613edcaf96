/** A path pattern for test files whose own name holds `word` whole (scripts/jest.mjs says what that is). */
export const wholeNamePattern = (word) => `/([^/]*[.-])?${word}([.-][^/]*)?$`;
