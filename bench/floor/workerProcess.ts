/**
 * The floor's worker in a process of its own, as ours and the peer's run, so that the benchmarks read
 * its CPU apart from the bench process. One JSON argument ({@link FloorWorkerConfig}); IPC through
 * workerChild.ts.
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { runBenchWorker, startBenchChild } from '../workerChild.ts';
import { createFloorActivities } from './activities.ts';

export interface FloorWorkerConfig {
  address: string;
  taskQueue: string;
  modelBaseURL: string;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as FloorWorkerConfig;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: config.address });
  const worker = await Worker.create({
    connection,
    taskQueue: config.taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: createFloorActivities(config.modelBaseURL),
  });
  await runBenchWorker(worker, connection);
}

startBenchChild(main);
