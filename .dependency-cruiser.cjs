/**
 * The dependency rules of src/ (`npm run lint:deps`, part of `npm test`). Folders under src/
 * are features (region-keys, users, auth, celestial-bodies, health, ...) except the shared
 * ones below them: common/, config/, database/. docs/development.md, "Adding a module", lists
 * the same rules in prose.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const SHARED = '^src/(common|config|database)/';
/** The entry points: they wire the app together (main, app, app.module, cli, cli-runner, the feature lists) and tools/. */
const ENTRY = '^src/([^/]+[.]ts$|tools/)';

module.exports = {
  /*
   * What a file may import is an allowlist: every import must match one of these, else
   * lint:deps fails with "not-in-allowed". A feature's index.ts is its public surface: what it
   * offers the others. Each shared area (common/<area>/, config/, database/) has one too.
   */
  allowedSeverity: 'error',
  allowed: [
    {
      comment: 'Packages and Node built-ins (the forbidden rules below still apply to them).',
      from: {},
      to: { path: '^node_modules/' },
    },
    { from: {}, to: { dependencyTypes: ['core'] } },
    {
      comment: 'Anything in its own folder: a feature inside itself, a shared area inside itself.',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/$1/' },
    },
    {
      comment: 'The shared folders among themselves (the forbidden rules keep them below the features).',
      from: { path: SHARED },
      to: { path: SHARED },
    },
    {
      comment: 'A feature (and an entry point) uses a shared area or another feature only through its front door.',
      from: { path: '^src/' },
      to: { path: ['^src/common/[^/]+/index[.]ts$', '^src/(config|database)/index[.]ts$', '^src/[^/]+/index[.]ts$'] },
    },
    {
      comment: 'The entry points wire the app: the shared modules and bootstrapping too, and each other.',
      from: { path: ENTRY },
      to: { path: [SHARED, '^src/[^/]+[.]ts$'] },
    },
  ],
  forbidden: [
    {
      name: 'shared-imports-no-feature',
      comment: 'common/, config/ and database/ sit below the features: they import none of them, nor the app.',
      severity: 'error',
      from: { path: SHARED },
      to: { path: '^src/', pathNot: SHARED },
    },
    {
      name: 'dto-below-the-service',
      comment:
        "DTOs are the HTTP shapes the controller maps to and from: they may use the feature's types and constants, never its service, controller or module (the service's answer types live in <feature>.types.ts).",
      severity: 'error',
      from: { path: ['^src/.+/dto/', '[.]dto[.]ts$'] },
      to: { path: '^src/.+[.](service|controller|module)[.]ts$' },
    },
    {
      name: 'typeorm-only-in-repositories',
      comment:
        "Services (and sample-data.ts) hold the rules, not the ORM: they run transactions through database/'s UnitOfWork and reach the tables through their repositories. TypeORM is imported by repositories, entities, migrations and database/ (and the parts of common/ that read its errors and pool), by no service.",
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: [
          '^src/database/',
          '^src/common/(?!.*[.]service[.]ts$)',
          '[.]repository[.]ts$',
          '/entities/[^/]+[.]entity[.]ts$',
          '/migrations/[^/]+[.]ts$',
        ],
      },
      to: { path: '^node_modules/(@nestjs/)?typeorm/' },
    },
    {
      name: 'no-import-of-the-app',
      comment:
        'Only the entry points (main, app, app.module, cli, tools/) wire modules together; nothing else imports them.',
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
    // Modules keep the path they have here where node_modules is a link (the scaffold's test
    // links it into a copy of the repository), so that the rules' node_modules/ paths match.
    preserveSymlinks: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages as Node does for this CommonJS build (some packages declare only
    // "exports", which the default conditions do not reach).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'] },
  },
};
