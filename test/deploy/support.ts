import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The real CLI's help text, to check a command line against the commands and options it has. */
export async function cliHelp(...command: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...YIEM_FROM_SOURCES, ...command, '--help'],
    { cwd: ROOT },
  );
  return stdout;
}

/**
 * Asserts-by-throwing that `args` (what follows `yiem`) names an existing command and only options
 * that command declares.
 */
export async function checkYiemCommandLine(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (!command) throw new Error('empty yiem command line');
  const commands = [...(await cliHelp()).matchAll(/^ {2}([a-z-]+) /gm)].map((match) => match[1]);
  if (!commands.includes(command))
    throw new Error(`"yiem ${command}" is not a command (${commands.join(', ')})`);
  const help = await cliHelp(command);
  for (const option of rest.filter((arg) => arg.startsWith('--'))) {
    if (!new RegExp(`(^|[ ,])${option}\\b`, 'm').test(help)) {
      throw new Error(`"yiem ${command}" has no option ${option}`);
    }
  }
}
