import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { type ModelSettings, resolveModelSettings } from './model/settings.ts';
import { AgentPlugin } from './plugin.ts';
import { ToolRegistry } from './registry.ts';
import type { AgentEventSink, AgentHooks, AgentTool } from './types.ts';

/** The task queue conversations run on unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'yiem-agent';

/** The built-in tools shipped in this package (getWeather, getTime, listTools). */
export const BUILTIN_TOOLS_DIR = fileURLToPath(new URL('../tools/', import.meta.url));

export interface AgentWorkerOptions {
  /** A connection to reuse; otherwise one is opened to `address`. */
  connection?: NativeConnection;
  /** Default: env `TEMPORAL_ADDRESS`, else `127.0.0.1:7233`. */
  address?: string;
  /** Default: env `TEMPORAL_NAMESPACE`, else `default`. */
  namespace?: string;
  /** Default: env `YIEM_TASK_QUEUE`, else `yiem-agent`. */
  taskQueue?: string;
  /** Tools to register by hand (the seed's `registerTool`). */
  tools?: AgentTool[];
  /** Directories whose tool files are loaded in alphabetical order (the seed's `loadTools`). */
  toolsDir?: string | string[];
  /** Whether getWeather, getTime and listTools are registered first. Default true. */
  builtinTools?: boolean;
  model?: ModelSettings;
  hooks?: AgentHooks;
  eventSink?: AgentEventSink;
  /** Tool results above this many bytes (text or details) are cut with a note to the model. Default 256 KB. */
  maxToolResultBytes?: number;
  /** A prebuilt bundle (from `bundleWorkflowCode`), to skip bundling at start-up. */
  workflowBundle?: { code: string };
  /** Any other Temporal worker option, e.g. concurrency limits. */
  workerOptions?: Partial<WorkerOptions>;
}

/** A running agent worker and the registry it serves tools from. */
export interface AgentWorker {
  worker: Worker;
  registry: ToolRegistry;
  taskQueue: string;
  /** Runs until `shutdown()`; resolves when the worker has stopped. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Loads the tools and creates a Temporal worker that runs conversations and their activities. */
export async function createAgentWorker(options: AgentWorkerOptions = {}): Promise<AgentWorker> {
  const address = options.address ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
  const taskQueue = options.taskQueue ?? process.env.YIEM_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  const registry = await buildRegistry(options);
  const ownsConnection = !options.connection;
  const connection = options.connection ?? (await NativeConnection.connect({ address }));
  const clientConnection = Connection.lazy({ address });
  const client = new Client({ connection: clientConnection, namespace });

  const plugin = new AgentPlugin({
    registry,
    model: resolveModelSettings(options.model),
    getClient: async () => client,
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.eventSink ? { eventSink: options.eventSink } : {}),
    ...(options.maxToolResultBytes ? { maxToolResultBytes: options.maxToolResultBytes } : {}),
  });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    ...options.workerOptions,
    plugins: [plugin, ...(options.workerOptions?.plugins ?? [])],
  });

  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= worker.run().finally(async () => {
      await clientConnection.close();
      if (ownsConnection) await connection.close();
    });
    return running;
  };
  return {
    worker,
    registry,
    taskQueue,
    run,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

async function buildRegistry(options: AgentWorkerOptions): Promise<ToolRegistry> {
  const registry = new ToolRegistry();
  if (options.builtinTools ?? true) await registry.loadTools(BUILTIN_TOOLS_DIR);
  const dirs = options.toolsDir === undefined ? [] : [options.toolsDir].flat();
  for (const dir of dirs) await registry.loadTools(dir);
  for (const tool of options.tools ?? []) registry.registerTool(tool);
  return registry;
}
