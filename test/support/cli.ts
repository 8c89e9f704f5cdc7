import { fileURLToPath } from 'node:url';

/**
 * Node's arguments that run the yiem CLI from the sources (through tsx), so the tests need no build
 * and always test the code as it is: `spawn(process.execPath, [...YIEM_FROM_SOURCES, 'list'])`.
 */
export const YIEM_FROM_SOURCES = [
  '--import',
  'tsx',
  fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)),
];
