/**
 * Tests compile to CommonJS, like the server. Nest 12 ships as ES modules only; Node 24's
 * require(esm) loads it, and Jest reaches that through its VM-modules support, hence
 * --experimental-vm-modules in the npm scripts.
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

module.exports = {
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      // Only e2e tests start the compiled server; a project's global setup runs only when
      // one of its tests does, so unit runs skip the build.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
  ],
};
