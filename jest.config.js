// Jest runs the TypeScript sources as ESM (client-node 1.x is ESM-only).
// Type-checking is done by `tsc` in `make lint`; here ts-jest only transpiles.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json'  }],
  },
  roots: ['<rootDir>/test'],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  // Generous: only meant to catch hangs. Integration tests wait on real servers.
  testTimeout: 180_000,
  // Two lanes, one worker each (test/support/lanes-runner.js): the files on the
  // shared clusters one at a time, beside them the unit tests and the files
  // with clusters of their own. A run of one file runs in band.
  runner: '<rootDir>/test/support/lanes-runner.js',
  maxWorkers: 2,
  verbose: true,
};
