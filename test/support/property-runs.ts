import type { Parameters } from 'fast-check';

/**
 * fast-check settings for the property suites: a bounded number of runs, so a suite stays
 * well under a minute, and a way to replay a failure. fast-check prints the seed and path of
 * a failing run; `PROPERTY_SEED=<seed> PROPERTY_PATH=<path>` replays exactly that run, and
 * `PROPERTY_RUNS=<n>` runs more (or fewer) cases.
 */
export function propertyRuns<T>(defaultRuns: number): Parameters<T> {
  const { PROPERTY_SEED: seed, PROPERTY_PATH: path, PROPERTY_RUNS: runs } = process.env;
  return {
    numRuns: runs ? Number(runs) : defaultRuns,
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
  };
}
