/**
 * A worker in its own process, so that the benchmarks can measure its memory and SIGKILL it.
 * Started by `workerHandle.ts` with one JSON argument ({@link WorkerProcessConfig}); talks over IPC.
 */
import { readFile } from 'node:fs/promises';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { payloadStorage, payloadStorageFromEnv } from '../src/infrastructure/storage/payloadStorage.ts';
import { createAgentWorker } from '../src/worker/worker.ts';
import { createBaselineActivities } from './baseline/activities.ts';
import {
  crashTool,
  largeResultTool,
  noopBatchedTool,
  noopLocalTool,
  noopOnceTool,
  noopTool,
  slowBatchedTool,
  slowLocalTool,
  slowTool,
  waitTool,
} from './tools.ts';
import { sendToBench, serveBench, startBenchChild } from './workerChild.ts';

export interface WorkerProcessConfig {
  address: string;
  taskQueue: string;
  bundlePath: string;
  /** When set, also runs the whole-context baseline workflow on `<taskQueue>-baseline`. */
  baselineBundlePath?: string;
  modelBaseURL: string;
  /** How long one model request may take (default 30 s; scenario m streams megabytes). */
  modelTimeoutMs?: number;
  crashHeartbeatTimeout: string;
  /** Extra Temporal worker options (the tuning experiments). */
  workerOptions?: Record<string, unknown>;
  /** The payload store's directory, shared with the benchmark's client. */
  payloadsDir?: string;
  /** Instead, the payload store this environment configures (`payloadStorageFromEnv`: the S3 store). */
  payloadStoreEnv?: Record<string, string>;
  /** Self-written tools in this directory and MCP servers (scenario j: large results). */
  selfWritingDir?: string;
  mcpServers?: Record<string, { command: string; args: string[] }>;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: config.address });
  const model = {
    baseURL: config.modelBaseURL,
    apiKey: 'bench',
    model: 'scripted',
    timeoutMs: config.modelTimeoutMs ?? 30_000,
  };
  const dataConverter = config.payloadStoreEnv
    ? { externalStorage: payloadStorageFromEnv(config.payloadStoreEnv) }
    : config.payloadsDir
      ? { externalStorage: payloadStorage({ directory: config.payloadsDir }) }
      : undefined;
  const agent = await createAgentWorker({
    connection: {
      nativeConnection: connection,
      address: config.address,
      taskQueue: config.taskQueue,
      ...(dataConverter ? { dataConverter } : {}),
    },
    tools: {
      builtinTools: false,
      tools: [
        noopTool,
        noopLocalTool,
        noopBatchedTool,
        noopOnceTool,
        waitTool,
        slowTool,
        slowLocalTool,
        slowBatchedTool,
        largeResultTool,
        crashTool(config.crashHeartbeatTimeout, {
          onStart: (attempt) => sendToBench({ type: 'toolStart', attempt, at: Date.now() }),
          onEnd: (attempt) => sendToBench({ type: 'toolEnd', attempt, at: Date.now() }),
        }),
      ],
      ...(config.selfWritingDir ? { selfWriting: { toolsDir: config.selfWritingDir, memoryMb: 128 } } : {}),
      ...(config.mcpServers ? { mcpServers: config.mcpServers } : {}),
    },
    models: { model },
    worker: {
      workflowBundle: { code: await readFile(config.bundlePath, 'utf8') },
      ...(config.workerOptions ? { options: config.workerOptions } : {}),
    },
  });
  const workers: Promise<void>[] = [agent.run()];
  let baseline: Worker | undefined;
  if (config.baselineBundlePath) {
    baseline = await Worker.create({
      connection,
      taskQueue: `${config.taskQueue}-baseline`,
      workflowBundle: { code: await readFile(config.baselineBundlePath, 'utf8') },
      activities: createBaselineActivities(model),
      ...config.workerOptions,
    });
    workers.push(baseline.run());
  }
  serveBench({
    maxCachedWorkflows: agent.worker.options.maxCachedWorkflows,
    shutdown: () => {
      baseline?.shutdown();
      void agent.shutdown();
    },
  });
  await Promise.all(workers);
  await connection.close();
  process.disconnect?.();
}

startBenchChild(main);
