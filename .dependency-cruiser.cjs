/**
 * The dependency rules of src/ (`npm run lint:deps`, part of `npm test`). Folders under src/
 * are features (region-keys, users, auth, celestial-bodies, health, ...) except the shared
 * ones below them: common/, config/, database/. The README's "Adding a module" lists the
 * same rules in prose.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const SHARED = '^src/(common|config|database)/';

module.exports = {
  forbidden: [
    {
      name: 'shared-imports-no-feature',
      comment: 'common/, config/ and database/ sit below the features: they import none of them, nor the app.',
      severity: 'error',
      from: { path: SHARED },
      to: { path: '^src/', pathNot: SHARED },
    },
    {
      name: 'no-foreign-repository-entity-or-migration',
      comment:
        "A feature uses another only through what that module exports (its services, decorators, DTOs): never its repository, entities or migrations.",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/(entities/|migrations/|[^/]+[.]repository[.]ts$)', pathNot: '^src/$1/' },
    },
    {
      name: 'no-import-of-the-app',
      comment: 'Only the entry points (main, app, app.module, cli, tools/) wire modules together; nothing else imports them.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/tools/' },
      to: { path: '^src/[^/]+[.]ts$' },
    },
    {
      name: 'no-circular',
      comment: 'Files that import each other (type-only imports aside) cannot be understood, or loaded, one at a time.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-dev-dependency-at-run-time',
      comment:
        'devDependencies are not installed in production (npm ci --omit=dev). pino-pretty is the one exception: the logger loads it only when asked for readable logs, and falls back to JSON lines without it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: '^node_modules/pino-pretty/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages as Node does for this CommonJS build (some packages declare only
    // "exports", which the default conditions do not reach).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'] },
  },
};
