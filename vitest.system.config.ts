import { defineConfig } from 'vitest/config';
import { PACKAGE_SOURCES_ALIAS, SOURCE_CONDITION_FLAG } from './test/support/sourceCondition.ts';

/**
 * `npm run test:system`: whole-system fault tests (worker processes SIGKILLed mid-call, servers
 * restarted, browsers driven) that take too long for `npm test`; `.ci/run` runs them after it.
 */
export default defineConfig({
  resolve: { alias: PACKAGE_SOURCES_ALIAS },
  test: {
    globalSetup: ['test/support/globalSetup.ts'],
    setupFiles: ['test/support/workerLog.ts'],
    include: ['test/system/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    // vitest's default of 1 s fails a poll for something a loaded machine does a little later.
    expect: { poll: { timeout: 30_000 } },
    pool: 'forks',
    execArgv: [SOURCE_CONDITION_FLAG],
  },
});
