/**
 * NestJS 12 ships as ES modules only, and Jest can load those on Node 20 only in its ES
 * module mode: tests run with --experimental-vm-modules (see package.json), and ts-jest
 * emits ES modules for them.
 * @type {import('jest').Config}
 */
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.test.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

export default {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'] },
  ],
};
