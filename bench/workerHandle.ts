import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerProcessMessage } from './workerChild.ts';
import type { WorkerProcessConfig } from './workerProcess.ts';

const WORKER_SCRIPT = fileURLToPath(new URL('./workerProcess.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  external: number;
  /** The worker's workflow cache size (its option, or the SDK's default from the heap limit). */
  maxCachedWorkflows: number;
  /** The longest the worker's event loop was blocked since the previous call. */
  eventLoopMaxMs: number;
}

/** A worker process the benchmark controls: ask its memory, shut it down, or SIGKILL it. */
export interface WorkerHandle {
  child: ChildProcess;
  /** Whether the process still runs: neither exited nor killed. */
  alive(): boolean;
  /** Resolves, with how it ended (`exitOf`), once the process has ended. */
  exited: Promise<string>;
  memory(): Promise<MemoryUsage>;
  /** Resolves with the next message of this type (tool start and end events). */
  next(type: 'toolStart' | 'toolEnd'): Promise<{ attempt: string; at: number }>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** Our agent worker in a process of its own (workerProcess.ts). */
export function startWorkerProcess(config: WorkerProcessConfig): Promise<WorkerHandle> {
  return forkWorkerProcess(WORKER_SCRIPT, config);
}

/**
 * Forks `script` with `config` as its one JSON argument and waits until it says it is ready; the
 * script answers over IPC through workerChild.ts.
 */
export async function forkWorkerProcess(script: string, config: unknown): Promise<WorkerHandle> {
  const child = fork(script, [JSON.stringify(config)], {
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      ...(process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Messages nobody waits for yet are kept, so an event that arrives early is not lost.
  const waiting = new Map<string, ((message: WorkerProcessMessage) => void)[]>();
  const unclaimed = new Map<string, WorkerProcessMessage[]>();
  child.on('message', (message: WorkerProcessMessage) => {
    const resolve = waiting.get(message.type)?.shift();
    if (resolve) resolve(message);
    else unclaimed.set(message.type, [...(unclaimed.get(message.type) ?? []), message]);
  });
  const next = <T extends WorkerProcessMessage>(type: string): Promise<T> =>
    new Promise((resolve) => {
      const early = unclaimed.get(type)?.shift();
      if (early) {
        resolve(early as T);
        return;
      }
      waiting.set(type, [...(waiting.get(type) ?? []), resolve as (message: WorkerProcessMessage) => void]);
    });
  // Not events.once, which an 'error' (a send on a closed channel) would reject; such an error is
  // kept for the message of the call that finds the channel closed.
  const exited = new Promise<string>((resolve) => child.once('exit', () => resolve(exitOf(child))));
  let channelError: Error | undefined;
  child.on('error', (error) => {
    channelError = error;
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const ready = next('ready');
  const timeout = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS);
  await Promise.race([
    ready,
    exited.then(() => {
      throw new Error('The benchmark worker process exited before it was ready');
    }),
  ]);
  clearTimeout(timeout);
  return {
    child,
    alive,
    exited,
    async memory() {
      const gone = () =>
        alive()
          ? new Error(
              `The benchmark worker process has closed its IPC channel (${channelError?.message ?? 'no error'})`,
            )
          : new Error(`The benchmark worker process has exited (${exitOf(child)})`);
      if (!alive() || !child.connected) throw gone();
      const reply = next<Extract<WorkerProcessMessage, { type: 'memory' }>>('memory');
      child.send({ type: 'memory' });
      const { rss, heapUsed, external, maxCachedWorkflows, eventLoopMaxMs } = await Promise.race([
        reply,
        exited.then(() => {
          throw gone();
        }),
      ]);
      return { rss, heapUsed, external, maxCachedWorkflows, eventLoopMaxMs };
    },
    next: (type) => next<Extract<WorkerProcessMessage, { attempt: string }>>(type),
    async stop() {
      if (!alive()) return;
      // A process that can no longer be asked to stop is killed.
      if (!child.connected) child.kill('SIGKILL');
      else child.send({ type: 'shutdown' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (!alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** How a worker process ended, for error messages: its exit code or the signal that killed it. */
function exitOf(child: ChildProcess): string {
  if (child.signalCode) return `killed by ${child.signalCode}`;
  return child.exitCode === null ? 'still running' : `exit code ${child.exitCode}`;
}
