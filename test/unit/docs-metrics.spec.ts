import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { API_KEY_OUTCOMES, LEAKED_KEY_OUTCOMES } from '../../src/common/metrics/security-counters';

/**
 * The outcomes of key authentications that the docs name against the code's list, as
 * docs-settings.spec.ts does for the settings: an operator alerting on an outcome the
 * table leaves out would never learn it exists, and one on a name the code never sends
 * would never fire.
 */
const DOC = 'docs/operations.md';
const SERIES = 'region_keys_api_api_key_authentications_total';
/** The outcomes of leak reports: a series of its own, with an `outcome` label too. */
const LEAKED_SERIES = 'region_keys_api_leaked_api_keys_total';

/** The labels cell of the series' row in the Metrics table: every value in backticks. */
function tabledOutcomes(series = SERIES): string[] {
  const row = readFileSync(DOC, 'utf8')
    .split('\n')
    .find((line) => line.startsWith(`| \`${series}\``));
  if (!row) throw new Error(`${DOC} has no row for ${series} in its Metrics table`);
  const labels = row.split('|')[2];
  return [...labels.matchAll(/`([a-z_]+)`/g)].map(([, value]) => value).filter((value) => value !== 'outcome');
}

/** Every outcome a Markdown file quotes (`outcome="a"`, or `outcome="a"|"b"`), with where. */
function outcomesNamed(): { outcome: string; where: string }[] {
  const files = ['README.md', 'SECURITY.md', ...readdirSync('docs').map((file) => join('docs', file))];
  return files
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          [...line.matchAll(/outcome=("[^"]*"(?:\|"[^"]*")*)/g)].flatMap(([, quoted]) =>
            [...quoted.matchAll(/"([^"]*)"/g)].map(([, outcome]) => ({ outcome, where: `${file}:${i + 1}` })),
          ),
        ),
    );
}

describe('key authentication outcomes in the docs', () => {
  it(`lists every outcome the code counts in ${DOC}, and no other`, () => {
    expect([...tabledOutcomes()].sort()).toEqual([...API_KEY_OUTCOMES].sort());
    expect([...tabledOutcomes(LEAKED_SERIES)].sort()).toEqual([...LEAKED_KEY_OUTCOMES].sort());
  });

  it('names only outcomes the code counts wherever a doc quotes one', () => {
    const known = new Set<string>([...API_KEY_OUTCOMES, ...LEAKED_KEY_OUTCOMES]);
    const named = outcomesNamed();
    expect(named.length).toBeGreaterThan(0);
    expect(
      named.filter(({ outcome }) => !known.has(outcome)).map(({ outcome, where }) => `${outcome} (${where})`),
    ).toEqual([]);
  });
});
