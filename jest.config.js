/** Jest runs the TypeScript sources directly (ESM, transpile-only); `npm run typecheck` owns type errors. */
export default {
  // jest's node environment, and a worker that exits promptly once its files are done (see the file)
  testEnvironment: '<rootDir>/test/support/jest-environment.js',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // the outage suite kills and restarts a kube-apiserver kit of its own: make e2e-real runs it alone, after the
  // e2e runs (npm run test:outage), so its load never lands beside the timing-sensitive suites of make test
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/outage/'],
  // the bench's and kit's etcd data (.cache) holds *.snap files jest would take for obsolete snapshots
  modulePathIgnorePatterns: ['<rootDir>/.cache/'],
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
};
