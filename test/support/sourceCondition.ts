import { fileURLToPath } from 'node:url';

/**
 * Files that import `yiem-agent` by name (the built-in tools, as a user's tool does) get the sources
 * instead of the build in dist/: Vite through an alias, and Node (tool files loaded through tsx, the
 * CLI and workers the tests start from the sources) through the package's `yiem-source` export
 * condition. Only the processes that run the sources get it, never an installed package under test.
 */
export const SOURCE_CONDITION = 'yiem-source';
export const SOURCE_CONDITION_FLAG = `--conditions=${SOURCE_CONDITION}`;

export const PACKAGE_SOURCES_ALIAS = [
  { find: /^yiem-agent$/, replacement: fileURLToPath(new URL('../../src/index.ts', import.meta.url)) },
  {
    find: /^yiem-agent\/(worker|testing)$/,
    replacement: fileURLToPath(new URL('../../src/$1/index.ts', import.meta.url)),
  },
  {
    find: /^yiem-agent\/workflows$/,
    replacement: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
  },
];
