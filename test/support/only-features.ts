/**
 * ONLY_FEATURES (comma-separated folder names under src/) narrows the suites that go over every
 * route (hostile input, problem examples, locations) to those features' routes: each route
 * with one of the names as a segment of its path (`/comets/{id}`, `/planets/{planetId}/comets`).
 * The scaffold's test sets it on its copy of the repository, where the other routes are the
 * ones the run that started it checks. Unset, every route is checked.
 */
const onlyFeatures = (): string[] | undefined =>
  process.env.ONLY_FEATURES?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);

/** Whether the suites that go over every route check this one (`/a/{b}` or `/a/:b`). */
export function checksRoute(path: string): boolean {
  const only = onlyFeatures();
  return !only || path.split('/').some((segment) => only.includes(segment));
}

/**
 * The features ONLY_FEATURES names that none of `paths` belongs to: a name that matches no
 * route would leave a narrowed suite nothing of that feature to check. Empty when unset.
 */
export function featuresWithoutRoutes(paths: string[]): string[] {
  return (onlyFeatures() ?? []).filter((name) => !paths.some((path) => path.split('/').includes(name)));
}
