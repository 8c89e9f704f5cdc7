import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import type { AgentActivities } from '../../contract/protocol.ts';

/** This worker's own task queue for the sessions it holds: unique to the process. */
export function sessionQueueName(taskQueue: string): string {
  return `${taskQueue}@mcp-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/**
 * Runs `main` and, beside it, a worker on this process's session queue that runs only tool calls: the
 * calls PREPARE pinned to a session this process holds. Each stops when the other does.
 */
export async function runWithSessionWorker(
  main: Worker,
  runMain: (worker: Worker) => Promise<void>,
  options: Pick<WorkerOptions, 'connection' | 'namespace' | 'dataConverter'> & {
    sessionQueue: string;
    executeTool: AgentActivities['executeTool'];
  },
): Promise<void> {
  const sessions = await Worker.create({
    ...(options.connection ? { connection: options.connection } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    taskQueue: options.sessionQueue,
    activities: { executeTool: options.executeTool },
  });
  const stopBoth = (): void => {
    for (const worker of [main, sessions]) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  const results = await Promise.allSettled([
    runMain(main).finally(stopBoth),
    sessions.run().finally(stopBoth),
  ]);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}
