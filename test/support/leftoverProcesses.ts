import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Every process a test run starts inherits this variable, set to the run's id, through its environment. */
const RUN_MARK = 'YIEM_TEST_RUN';
/** How long processes that are shutting down at the end of a run may take before they count as left behind. */
const EXIT_GRACE_MS = 5_000;

const VITEST_WATCHDOG = 'vitest-watchdog';

export interface LeftoverProcess {
  pid: number;
  command: string;
}

/** Marks this run: processes started from here on carry its id. */
export function markTestRun(): string {
  const id = randomUUID();
  process.env[RUN_MARK] = id;
  return id;
}

/**
 * The processes of this run still alive at its end (servers, workers, browsers, MCP servers a test
 * started and did not stop), after a grace period for those still shutting down. Each is SIGKILLed,
 * so that a failed run does not leave them for the next one.
 */
export async function killLeftoverProcesses(runId: string): Promise<LeftoverProcess[]> {
  const deadline = Date.now() + EXIT_GRACE_MS;
  let left = await processesOfRun(runId);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(200);
    left = await processesOfRun(runId);
  }
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone since it was listed.
    }
  }
  return left;
}

async function processesOfRun(runId: string): Promise<LeftoverProcess[]> {
  const mark = `${RUN_MARK}=${runId}`;
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const found: LeftoverProcess[] = [];
  for (const pid of pids) {
    if (pid === process.pid) continue;
    const environment = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (!environment.split('\0').includes(mark)) continue;
    const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const line = command.split('\0').join(' ').trim();
    // A zombie has no command line left (it has exited; its parent has not read its status yet), and
    // vitest's own watchdog ends after this teardown.
    if (line !== '' && line !== VITEST_WATCHDOG) found.push({ pid, command: line });
  }
  return found;
}
