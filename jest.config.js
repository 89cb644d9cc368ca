// Jest runs the ES-module build of NestJS 12 and TypeORM 1.x natively (--experimental-vm-modules, see package.json).
const esm = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testEnvironment: 'node',
};

// One PostgreSQL for the whole run, whichever tiers it selects: Jest runs a global setup module once, however
// many projects name it (test/support/global-setup.ts).
const database = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/**
 * Four tiers (docs/testing.md), told apart by where a file lives and how its name ends:
 * - unit: `src/**\/*.spec.ts`, pure code with typed fakes, no database;
 * - integration: `test/**\/*.int-spec.ts`, the service's classes on a real PostgreSQL, no HTTP;
 * - e2e: `test/**\/*.e2e-spec.ts`, the service over HTTP;
 * - slow: `test/**\/*.slow-spec.ts`, spawned processes, outages, replicas, a browser, the generated client, volume.
 * TEST_TIERS (comma-separated) picks tiers: `npm test` runs unit, integration and e2e, `npm run test:slow` the
 * slow tier, `npm run test:all` (and `npx jest <file>`) every tier. An environment variable, not
 * `--selectProjects`: that option would take the file names after it (`npm test -- test/<name>.e2e-spec.ts`) as
 * project names.
 */
const TIERS = [
  { ...esm, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
  { ...esm, ...database, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.int-spec.ts'] },
  { ...esm, ...database, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  { ...esm, ...database, displayName: 'slow', testMatch: ['<rootDir>/test/**/*.slow-spec.ts'] },
];
const names = TIERS.map((tier) => tier.displayName);
const chosen = process.env.TEST_TIERS?.split(',').map((name) => name.trim()) ?? names;
const unknown = chosen.filter((name) => !names.includes(name));
if (unknown.length > 0)
  throw new Error(`TEST_TIERS: unknown tier ${unknown.join(', ')} (tiers: ${names.join(', ')})`);

export default {
  // Global, not per project: e2e tests boot real services and databases.
  testTimeout: 60000,
  // One line per block skipped for a missing browser or server: what, and how to enable it (test/support/requires.ts).
  reporters: ['default', '<rootDir>/test/reporters/skip-reporter.js'],
  projects: TIERS.filter((tier) => chosen.includes(tier.displayName)),
};
