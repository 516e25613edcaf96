import { execFileSync } from 'node:child_process';

/** The bare words of `npm run test:e2e -- <word>` (scripts/jest.mjs) name suites by a whole name in the file's name. */
const WORDS = ['missions', 'region-keys', 'keys', 'support'];
let patterns: Record<string, RegExp>;
beforeAll(() => {
  // One process for every word: the helper is an ES module, which this (CommonJS) test cannot import.
  const script = `import { wholeNamePattern } from './scripts/lib/whole-name.mjs'; process.stdout.write(JSON.stringify(${JSON.stringify(WORDS)}.map(wholeNamePattern)));`;
  const sources = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as string[];
  patterns = Object.fromEntries(WORDS.map((word, index) => [word, new RegExp(sources[index])]));
});

it.each([
  ['missions', '/work/wt-missions/test/e2e/missions.e2e-spec.ts', true],
  ['missions', '/work/wt-missions/test/e2e/region-keys-permissions.e2e-spec.ts', false],
  ['missions', '/work/main/test/e2e/missions-api.e2e-spec.ts', true],
  ['region-keys', '/work/main/test/e2e/region-keys.e2e-spec.ts', true],
  ['region-keys', '/work/main/test/e2e/region-keys-permissions.e2e-spec.ts', true],
  ['keys', '/work/main/test/e2e/region-keys.e2e-spec.ts', true],
  ['keys', '/work/main/test/e2e/monkeys.e2e-spec.ts', false],
  ['support', '/work/main/test/support/whatever.e2e-spec.ts', false],
])('%s: %s → %s', (word, path, matches) => {
  expect(patterns[word].test(path)).toBe(matches);
});
