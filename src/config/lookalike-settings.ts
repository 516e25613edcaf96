/**
 * Variables that look like a setting and are not one: a misspelt name (DATABSE_URL) is
 * otherwise ignored without a word, and the service starts on its default (for DATABASE_URL,
 * an embedded database of its own). Only names are compared; values are never read.
 */

/** Set on most machines and by npm and OpenTelemetry for their own use: never a misspelt setting of ours. */
const FOREIGN = /^(npm_|OTEL_)/i;
const FOREIGN_NAMES = new Set(['HOME', 'HOSTNAME', 'HOSTTYPE', 'LANG', 'PATH', 'PWD', 'SHELL', 'TERM', 'TZ', 'USER']);

/** Edits (insert, delete, change, swap two neighbours) that make `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + change);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}

/** A short name is near another only one edit away: HOME is not a misspelt HOST. */
const nearEnough = (name: string, distance: number) => distance <= (name.length < 8 ? 1 : 2);

/**
 * The first word of the names that two settings or more share (DATABASE_, REDIS_, JWT_...):
 * an unknown name starting with one is taken for a setting of that family.
 */
function familyPrefixes(known: readonly string[]): Set<string> {
  const counts = new Map<string, number>();
  for (const name of known) {
    const cut = name.indexOf('_');
    if (cut > 0) counts.set(name.slice(0, cut + 1), (counts.get(name.slice(0, cut + 1)) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count > 1).map(([prefix]) => prefix));
}

/** The known setting `name` resembles, or undefined when it resembles none (or is one). */
function resembled(name: string, known: readonly string[], prefixes: Set<string>): string | undefined {
  const upper = name.toUpperCase();
  if (known.includes(name) || FOREIGN.test(name) || FOREIGN_NAMES.has(upper)) return undefined;
  const [closest, distance] = known
    .map((candidate) => [candidate, editDistance(upper, candidate)] as const)
    .reduce((best, next) => (next[1] < best[1] ? next : best));
  if (nearEnough(upper, distance)) return closest;
  const prefix = [...prefixes].find((family) => upper.startsWith(family));
  if (!prefix) return undefined;
  // The family's setting nearest to it, e.g. REDIS_HOST -> REDIS_URL.
  return known
    .filter((candidate) => candidate.startsWith(prefix))
    .reduce((best, next) => (editDistance(upper, next) < editDistance(upper, best) ? next : best));
}

/**
 * The part of a variable's name that is a name: up to its first character that is not a
 * letter, digit or underscore. What follows may be a secret: a YAML-style line of .env
 * (`DATABASE_URL: postgres://app:password@db/app?sslmode=require`) makes a variable whose
 * name runs to the `=`.
 */
const validPrefix = (name: string): string => /^[A-Za-z_][A-Za-z0-9_]*/.exec(name)?.[0] ?? '';

/**
 * One line per variable of `env` that looks like one of the `known` settings without being one.
 * A malformed name is shown only up to its first character that no name may hold.
 */
export function lookalikeWarnings(env: NodeJS.ProcessEnv, known: readonly string[]): string[] {
  const prefixes = familyPrefixes(known);
  return Object.keys(env)
    .sort()
    .flatMap((name) => {
      const valid = validPrefix(name);
      if (valid !== name) {
        const setting = known.includes(valid) ? valid : valid && resembled(valid, known, prefixes);
        return setting
          ? [
              `A variable named ${valid} followed by characters no name may hold (rest not shown) is ignored; is its line malformed? Settings are written NAME=value, as ${setting}=...`,
            ]
          : [];
      }
      const setting = resembled(name, known, prefixes);
      return setting ? [`${name} is not a setting and is ignored; did you mean ${setting}?`] : [];
    });
}
