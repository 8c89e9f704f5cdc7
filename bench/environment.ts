import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { AgentClient } from '../src/client/client.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../src/infrastructure/server/index.ts';
import { payloadStorage, payloadStorageFromEnv } from '../src/infrastructure/storage/payloadStorage.ts';
import { type ScriptedModel, startScriptedModel } from '../src/testing/index.ts';
import { benchReply } from './scriptedReplies.ts';
import { startWorkerProcess, type WorkerHandle } from './workerHandle.ts';

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never;

export interface EnvironmentOptions {
  /** Server dynamic config (the eager-dispatch experiment). */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Serve the server's metrics (`server.metricsUrl`), for counting Actions. */
  metrics?: boolean;
}

/** A dev server on free ports with its own data dir, the scripted model, and the two workflow bundles. */
export interface BenchEnvironment {
  server: DevServer;
  model: ScriptedModel;
  /** A client with the workers' payload store. */
  temporal: Client;
  payloadsDir: string;
  bundlePath: string;
  baselineBundlePath: string;
  /** A fresh worker process on a fresh task queue, with a client for it. */
  startWorker(options?: {
    workerOptions?: Record<string, unknown>;
    crashHeartbeatTimeout?: string;
    taskQueue?: string;
    /** Also run the whole-context baseline workflow on `<taskQueue>-baseline`. */
    baseline?: boolean;
    /** Self-written tools and MCP servers (scenario j). */
    selfWritingDir?: string;
    mcpServers?: Record<string, { command: string; args: string[] }>;
    /** Another model server than the environment's, and how long a request to it may take (scenario m). */
    modelBaseURL?: string;
    modelTimeoutMs?: number;
    /** The worker and the returned client keep payloads in the store this environment configures (S3). */
    payloadStoreEnv?: Record<string, string>;
  }): Promise<{ worker: WorkerHandle; agents: AgentClient; taskQueue: string }>;
  close(): Promise<void>;
}

let queues = 0;

export async function startEnvironment(options: EnvironmentOptions = {}): Promise<BenchEnvironment> {
  const cliPath = await ensureTemporalCli();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-bench-'));
  const server = await startDevServer({
    dataDir,
    cliPath,
    port: 0,
    headless: true,
    ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
    ...(options.metrics ? { metricsPort: 0 } : {}),
  });
  const model = await startScriptedModel({ respond: benchReply });
  const bundlePath = path.join(dataDir, 'workflows.js');
  const baselineBundlePath = path.join(dataDir, 'baseline-workflows.js');
  const [bundle, baselineBundle] = await Promise.all([
    bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
      logger: silent,
    }),
    bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./baseline/workflow.ts', import.meta.url)),
      logger: silent,
    }),
  ]);
  await writeFile(bundlePath, bundle.code);
  await writeFile(baselineBundlePath, baselineBundle.code);
  // The whole-context baseline's history outgrows gRPC's default 4 MB message limit within 100 turns.
  const connection = await Connection.connect({
    address: server.address,
    channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
  });
  const payloadsDir = path.join(dataDir, 'payloads');
  const temporal = new Client({
    connection,
    dataConverter: { externalStorage: payloadStorage({ directory: payloadsDir }) },
  });
  const workers = new Set<WorkerHandle>();
  return {
    server,
    model,
    temporal,
    payloadsDir,
    bundlePath,
    baselineBundlePath,
    async startWorker(workerOptions = {}) {
      const taskQueue = workerOptions.taskQueue ?? `bench-${process.pid}-${++queues}`;
      const worker = await startWorkerProcess({
        address: server.address,
        taskQueue,
        bundlePath,
        ...(workerOptions.baseline ? { baselineBundlePath } : {}),
        modelBaseURL: workerOptions.modelBaseURL ?? model.baseURL,
        ...(workerOptions.modelTimeoutMs ? { modelTimeoutMs: workerOptions.modelTimeoutMs } : {}),
        crashHeartbeatTimeout: workerOptions.crashHeartbeatTimeout ?? '30 seconds',
        payloadsDir,
        ...(workerOptions.payloadStoreEnv ? { payloadStoreEnv: workerOptions.payloadStoreEnv } : {}),
        ...(workerOptions.workerOptions ? { workerOptions: workerOptions.workerOptions } : {}),
        ...(workerOptions.selfWritingDir ? { selfWritingDir: workerOptions.selfWritingDir } : {}),
        ...(workerOptions.mcpServers ? { mcpServers: workerOptions.mcpServers } : {}),
      });
      workers.add(worker);
      worker.child.once('exit', () => workers.delete(worker));
      const client = workerOptions.payloadStoreEnv
        ? new Client({
            connection,
            dataConverter: { externalStorage: payloadStorageFromEnv(workerOptions.payloadStoreEnv) },
          })
        : temporal;
      return { worker, agents: new AgentClient({ client, taskQueue }), taskQueue };
    },
    async close() {
      await Promise.all([...workers].map((worker) => worker.stop()));
      await connection.close();
      await model.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
