import { execFile } from 'node:child_process';
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

/** Runs `yiem ARGS --address ADDRESS` from the sources; resolves with its exit code and output. */
export function runYiem(
  args: string[],
  address: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args, '--address', address],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
  });
}

/** Runs `yiem ARGS` from the sources with `input` on its standard input; resolves with its exit code and output. */
export function yiemWithInput(
  args: string[],
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}
