import { execFileSync } from 'node:child_process';

/** The bare words of `npm run test:e2e -- <word>` (scripts/jest.mjs) name suites by a whole name in the file's name. */
const patternOf = (word: string): RegExp => {
  const script = `import { wholeNamePattern } from './scripts/lib/whole-name.mjs'; process.stdout.write(wholeNamePattern(${JSON.stringify(word)}));`;
  return new RegExp(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
};

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
  expect(patternOf(word).test(path)).toBe(matches);
});
