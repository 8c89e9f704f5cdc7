import type { Command } from 'commander';
import type { SelfWritingOptions } from '../contract/types/sandbox.ts';

/** The worker flags that turn on writeTool and set the limits of the sandbox written tools run in. */
export interface SelfWritingFlags {
  allowWriteTools?: string;
  sandboxTimeout?: string;
  sandboxMemory?: string;
  sandboxRead?: string[];
  sandboxNetwork?: boolean;
}

export function selfWritingOptions(command: Command): Command {
  return command
    .option(
      '--allow-write-tools <dir>',
      'enable writeTool: written tools go to DIR (share it between workers)',
    )
    .option('--sandbox-timeout <ms>', 'time limit of one written-tool call (default 10000)')
    .option('--sandbox-memory <mb>', 'memory limit of one written-tool call (default 64)')
    .option('--sandbox-read <path...>', 'files or directories written tools may read')
    .option('--sandbox-network', 'let written tools use fetch()');
}

/** The worker's `selfWriting` option, or undefined when writeTool stays off. */
export function selfWritingConfig(flags: SelfWritingFlags): SelfWritingOptions | undefined {
  if (!flags.allowWriteTools) {
    const sandboxFlags = [flags.sandboxTimeout, flags.sandboxMemory, flags.sandboxRead, flags.sandboxNetwork];
    if (sandboxFlags.some((flag) => flag !== undefined)) {
      throw new Error('The --sandbox-* flags apply to written tools: add --allow-write-tools DIR');
    }
    return undefined;
  }
  return {
    toolsDir: flags.allowWriteTools,
    ...(flags.sandboxTimeout ? { timeoutMs: positiveNumber('--sandbox-timeout', flags.sandboxTimeout) } : {}),
    ...(flags.sandboxMemory ? { memoryMb: positiveNumber('--sandbox-memory', flags.sandboxMemory) } : {}),
    ...(flags.sandboxRead ? { fsAllowlist: flags.sandboxRead } : {}),
    ...(flags.sandboxNetwork ? { allowNetwork: true } : {}),
  };
}

function positiveNumber(flag: string, value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new Error(`${flag} must be a positive number, got "${value}"`);
  return number;
}
