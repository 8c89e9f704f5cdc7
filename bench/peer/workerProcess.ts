/**
 * The peer's worker in a process of its own, as ours runs in bench/workerProcess.ts, so that the
 * benchmarks read its CPU and memory apart from the bench process. Started by `startPeer` with one
 * JSON argument ({@link PeerWorkerConfig}); talks over IPC through workerChild.ts.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { startOneWorkerChild } from '../workerChild.ts';
import * as activities from './activities.ts';
import { type PeerWorkerConfig, peerPlugin } from './worker.ts';

startOneWorkerChild<PeerWorkerConfig>((config, connection) =>
  Worker.create({
    connection,
    taskQueue: config.taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities,
    // The workflow takes its model params from the header of the client that started it, so one
    // worker serves both configurations; the worker's own only registers the model activity.
    plugins: [peerPlugin(config.modelBaseURL, 'activity')],
    // The agents SDK's ESM build has dynamic imports, which webpack would split into chunks that a
    // workflow sandbox cannot load ("Automatic publicPath", "self is not defined"): bundle them eagerly.
    bundlerOptions: {
      webpackConfigHook: (webpackConfig) => ({
        ...webpackConfig,
        module: {
          ...webpackConfig.module,
          parser: { ...webpackConfig.module?.parser, javascript: { dynamicImportMode: 'eager' } },
        },
      }),
    },
  }),
);
