/**
 * The floor's worker in a process of its own, as ours and the peer's run, so that the benchmarks read
 * its CPU apart from the bench process. One JSON argument ({@link FloorWorkerConfig}); IPC through
 * workerChild.ts.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { startOneWorkerChild } from '../workerChild.ts';
import { createFloorActivities } from './activities.ts';

export interface FloorWorkerConfig {
  address: string;
  taskQueue: string;
  modelBaseURL: string;
}

startOneWorkerChild<FloorWorkerConfig>((config, connection) =>
  Worker.create({
    connection,
    taskQueue: config.taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: createFloorActivities(config.modelBaseURL),
  }),
);
