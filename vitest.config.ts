import { defineConfig } from 'vitest/config';
import { PACKAGE_SOURCES_ALIAS, SOURCE_CONDITION_FLAG } from './test/support/sourceCondition.ts';

export default defineConfig({
  resolve: { alias: PACKAGE_SOURCES_ALIAS },
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    setupFiles: ['test/support/workerLog.ts'],
    include: ['test/**/*.test.ts'],
    // `npm run test:cluster` brings its own Temporal cluster; `npm run test:system` runs the long fault tests.
    exclude: ['test/cluster/**', 'test/system/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // vitest's default of 1 s fails a poll for something a loaded machine does a little later.
    expect: { poll: { timeout: 30_000 } },
    pool: 'forks',
    // Most test time is spent waiting on Temporal, workers and child processes, not on the CPU, so two
    // files at a time fit two cores (vitest's default of cores - 1 ran one file at a time).
    maxWorkers: 2,
    execArgv: [SOURCE_CONDITION_FLAG],
  },
});
