/**
 * Tests compile to CommonJS, like the server. Nest 12 ships as ES modules only; Node 24's
 * require(esm) loads it, and Jest reaches that through its VM-modules support, hence
 * --experimental-vm-modules in the npm scripts.
 *
 * TEST_TIER=unit or e2e runs one tier (npm run test:unit, test:e2e): chosen here rather than
 * with --selectProjects, which would take the file patterns given after it for project names.
 * @type {import('jest').Config}
 */
const common = {
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

const tiers = [
  { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
  {
    ...common,
    displayName: 'e2e',
    testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
    // Only e2e tests start the compiled server and use the migrated database templates; a
    // project's global setup runs only when one of its tests does, so unit runs skip both.
    globalSetup: '<rootDir>/test/support/global-setup.ts',
    globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  },
];

const tier = process.env.TEST_TIER;
if (tier && !tiers.some((project) => project.displayName === tier)) {
  throw new Error(`TEST_TIER=${tier}: expected one of ${tiers.map((project) => project.displayName).join(', ')}`);
}

module.exports = {
  testTimeout: 60000,
  // Files run side by side, each with its own database: most of an e2e file's time is spent
  // waiting (on processes it starts, timers, the database), so three workers keep both cores
  // busy. A worker that has grown large is replaced between files.
  maxWorkers: 3,
  workerIdleMemoryLimit: '2GB',
  projects: tier ? tiers.filter((project) => project.displayName === tier) : tiers,
};
