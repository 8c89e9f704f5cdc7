/**
 * The child side of a benchmark worker process (ours in workerProcess.ts, the peer's in
 * peer/workerProcess.ts): the IPC messages workerHandle.ts understands, and the answers to its
 * memory and shutdown requests.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';

export type WorkerProcessMessage =
  | { type: 'ready' }
  | { type: 'toolStart' | 'toolEnd'; attempt: string; at: number }
  | {
      type: 'memory';
      rss: number;
      heapUsed: number;
      external: number;
      maxCachedWorkflows: number;
      /** The longest the event loop was blocked since the previous memory report. */
      eventLoopMaxMs: number;
    };

export const sendToBench = (message: WorkerProcessMessage): void => {
  process.send?.(message);
};

/**
 * Answers the bench's memory requests (after a forced GC, so the reading is what the worker holds)
 * and calls `shutdown` when asked to stop; then says the worker is ready.
 */
export function serveBench(worker: { maxCachedWorkflows: number; shutdown(): void }): void {
  let stopping = false;
  const eventLoopDelay = monitorEventLoopDelay({ resolution: 10 });
  eventLoopDelay.enable();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'memory') {
      const eventLoopMaxMs = eventLoopDelay.max / 1e6;
      eventLoopDelay.reset();
      globalThis.gc?.();
      const usage = process.memoryUsage();
      sendToBench({
        type: 'memory',
        rss: usage.rss,
        heapUsed: usage.heapUsed,
        external: usage.external,
        maxCachedWorkflows: worker.maxCachedWorkflows,
        eventLoopMaxMs,
      });
    } else if (message.type === 'shutdown') {
      stopping = true;
      worker.shutdown();
    }
  });
  // A bench that dies without stopping its workers closes the IPC channel: don't outlive it, polling a
  // server that is gone and spending the CPU of the next run.
  process.on('disconnect', () => {
    if (!stopping) process.exit(1);
  });
  sendToBench({ type: 'ready' });
}

/** Starts a child's `main`; a child that fails says why and exits, so the bench sees it end. */
export function startBenchChild(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * A benchmark child that runs one worker (the peer's, the floor's): reads its JSON config argument,
 * connects to `config.address`, creates the worker with `create`, serves the bench until it asks to
 * stop, then closes the connection and lets the parent go.
 */
export function startOneWorkerChild<Config extends { address: string }>(
  create: (config: Config, connection: NativeConnection) => Promise<Worker>,
): void {
  startBenchChild(async () => {
    const config = JSON.parse(process.argv[2] ?? '{}') as Config;
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    const connection = await NativeConnection.connect({ address: config.address });
    const worker = await create(config, connection);
    const running = worker.run();
    serveBench({ maxCachedWorkflows: worker.options.maxCachedWorkflows, shutdown: () => worker.shutdown() });
    await running;
    await connection.close();
    process.disconnect?.();
  });
}
