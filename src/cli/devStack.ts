import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The task queue of `yiem dev`'s worker, its own so that a user's worker left on the default queue
 * (`yiem-agent`) never answers the dev chat's conversations, nor the dev worker theirs.
 */
export const DEV_TASK_QUEUE = 'yiem-dev';

/** What a running `yiem dev` tells the other commands started in the same folder. */
export interface DevStack {
  address: string;
  namespace: string;
  taskQueue: string;
  pid: number;
}

function stackFile(dataDir: string): string {
  return path.join(dataDir, 'dev-stack.json');
}

/** Writes the running stack's file; the returned function removes it when the stack stops. */
export async function announceDevStack(dataDir: string, stack: DevStack): Promise<() => Promise<void>> {
  const file = stackFile(dataDir);
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(stack)}\n`);
  return () => rm(file, { force: true });
}

/** The `yiem dev` running from `dataDir` against `address`, if its process is still alive. */
export async function runningDevStack(dataDir: string, address: string): Promise<DevStack | undefined> {
  let stack: DevStack;
  try {
    stack = JSON.parse(await readFile(stackFile(dataDir), 'utf8')) as DevStack;
  } catch {
    return undefined;
  }
  if (stack.address !== address || !isAlive(stack.pid)) return undefined;
  return stack;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
