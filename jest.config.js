// Jest runs the ES-module build of NestJS 12 and TypeORM 1.x natively (--experimental-vm-modules, see package.json).
const esm = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testEnvironment: 'node',
};

export default {
  // Global, not per project: e2e tests boot real services and databases.
  testTimeout: 60000,
  // One line per block skipped for a missing browser or server: what, and how to enable it (test/support/requires.ts).
  reporters: ['default', '<rootDir>/test/reporters/skip-reporter.js'],
  projects: [
    { ...esm, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...esm,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
