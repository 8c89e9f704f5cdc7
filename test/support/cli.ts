import { fileURLToPath } from 'node:url';
import { SOURCE_CONDITION_FLAG } from './sourceCondition.ts';

/** tsx's loader by URL, so a CLI started in any folder (a test's temporary one) finds it. */
export const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/**
 * Node's arguments that run the yiem CLI from the sources (through tsx), so the tests need no build
 * and always test the code as it is: `spawn(process.execPath, [...YIEM_FROM_SOURCES, 'list'])`.
 */
export const YIEM_FROM_SOURCES = [
  SOURCE_CONDITION_FLAG,
  '--import',
  TSX_LOADER,
  fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)),
];
