import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How long a screen may take to show what a test waits for before the test fails. */
const SCREEN_WAIT_MS = 30_000;

/**
 * A program running in a real pseudo-terminal (a tmux session on its own server socket), driven by
 * keystrokes and read back as the screen a person would see.
 */
export interface Terminal {
  /** Types text; `keys` are tmux key names (`Enter`, `C-c`). */
  type(text: string): Promise<void>;
  keys(...keys: string[]): Promise<void>;
  screen(): Promise<string>;
  /** Resolves with the screen once `test` accepts it; fails with the last screen after a while. */
  waitFor(test: string | RegExp | ((screen: string) => boolean), what?: string): Promise<string>;
  /** Resolves once the program has exited; fails with the last screen after a while. */
  waitForExit(): Promise<string>;
  close(): Promise<void>;
}

export async function startTerminal(
  command: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Terminal> {
  const socket = `yiem-test-${randomUUID()}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, ...args], { cwd: options.cwd });
  const env = Object.entries(options.env ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  await tmux(
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    '160',
    '-y',
    '50',
    '-c',
    options.cwd,
    ...env,
    shellCommand(command),
  );
  await tmux('set-option', '-t', 'main', 'remain-on-exit', 'on');
  const screen = async () => (await tmux('capture-pane', '-p', '-J', '-t', 'main', '-S', '-200')).stdout;
  return {
    async type(text) {
      await tmux('send-keys', '-t', 'main', '-l', text);
    },
    async keys(...keys) {
      await tmux('send-keys', '-t', 'main', ...keys);
    },
    screen,
    async waitFor(test, what) {
      const accepts =
        typeof test === 'function'
          ? test
          : (text: string) => (typeof test === 'string' ? text.includes(test) : test.test(text));
      const deadline = Date.now() + SCREEN_WAIT_MS;
      let last = '';
      while (Date.now() < deadline) {
        last = await screen();
        if (accepts(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`The terminal never showed ${what ?? String(test)}. Last screen:\n${last}`);
    },
    async waitForExit() {
      const deadline = Date.now() + SCREEN_WAIT_MS;
      while (Date.now() < deadline) {
        const { stdout } = await tmux('display-message', '-p', '-t', 'main', '#{pane_dead}');
        if (stdout.trim() === '1') return screen();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`The program never exited. Last screen:\n${await screen()}`);
    },
    async close() {
      await tmux('kill-server').catch(() => {});
    },
  };
}

function shellCommand(command: string[]): string {
  return command.map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(' ');
}
