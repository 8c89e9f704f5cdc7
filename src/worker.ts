import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { dataConverterFromEnv } from './codec/dataConverter.ts';
import { resolveTemporalConnection, type TemporalConnectionSettings } from './connection.ts';
import { type ModelSettings, resolveModelSettings } from './model/settings.ts';
import { AgentPlugin } from './plugin.ts';
import { ToolRegistry } from './registry.ts';
import { enableSelfWriting } from './selfWriting/writeTool.ts';
import { DEFAULT_TASK_QUEUE } from './taskQueue.ts';
import { type TracingOptions, tracingPlugins } from './tracing.ts';
import type { AgentEventSink, AgentHooks, AgentTool, SelfWritingOptions } from './types.ts';

export { DEFAULT_TASK_QUEUE };

/** The built-in tools shipped in this package (getWeather, getTime, listTools). */
export const BUILTIN_TOOLS_DIR = fileURLToPath(new URL('../tools/', import.meta.url));

/**
 * How a worker connects (address, namespace, API key, TLS, profile: see
 * {@link TemporalConnectionSettings}), what it runs, and with which tools.
 */
export interface AgentWorkerOptions extends TemporalConnectionSettings {
  /** A connection to reuse; otherwise one is opened from the connection settings. */
  connection?: NativeConnection;
  /** Default: env `YIEM_TASK_QUEUE`, else `yiem-agent`. */
  taskQueue?: string;
  /**
   * Whether this worker runs conversation workflows. Default true. A worker for a tool's dedicated
   * task queue (`AgentTool.taskQueue`) sets it to false and runs only that queue's tool activities.
   */
  workflows?: boolean;
  /**
   * How payloads are converted and encoded, e.g. {@link encryptedDataConverter}. Default: encrypted
   * when `YIEM_CODEC_KEYS` or `YIEM_CODEC_KEY_FILE` is set, else Temporal's default. Workers and
   * clients of one namespace must use the same.
   */
  dataConverter?: DataConverter;
  /** OpenTelemetry spans for conversations, turns, model calls and tool calls. Default off. */
  tracing?: TracingOptions;
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
  /**
   * Turns on writeTool (off by default: a model calling it is told this worker does not allow it).
   * Written tools go to `toolsDir`, run in a sandbox with these limits, and are picked up without a
   * restart by every worker that watches the same directory.
   */
  selfWriting?: SelfWritingOptions;
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
  const { connectionOptions, namespace } = resolveTemporalConnection(options);
  const env = options.env ?? process.env;
  const taskQueue = options.taskQueue ?? (env.YIEM_TASK_QUEUE || DEFAULT_TASK_QUEUE);
  const dataConverter = options.dataConverter ?? dataConverterFromEnv(env);
  const tracing = tracingPlugins(options.tracing);
  const registry = await buildRegistry(options);
  const ownsConnection = !options.connection;
  const connection = options.connection ?? (await NativeConnection.connect(connectionOptions));

  const plugin = new AgentPlugin(
    {
      registry,
      model: resolveModelSettings(options.model),
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.eventSink ? { eventSink: options.eventSink } : {}),
      ...(options.maxToolResultBytes ? { maxToolResultBytes: options.maxToolResultBytes } : {}),
    },
    { workflows: options.workflows ?? true },
  );
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(options.workflowBundle && options.workflows !== false
      ? { workflowBundle: options.workflowBundle }
      : {}),
    ...(dataConverter ? { dataConverter } : {}),
    ...options.workerOptions,
    plugins: [plugin, ...tracing, ...(options.workerOptions?.plugins ?? [])],
  });

  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= worker.run().finally(async () => {
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
  const { selfWriting } = options;
  const registry = new ToolRegistry(selfWriting ? { sandbox: selfWriting } : {});
  if (options.builtinTools ?? true) await registry.loadTools(BUILTIN_TOOLS_DIR);
  const dirs = options.toolsDir === undefined ? [] : [options.toolsDir].flat();
  for (const dir of dirs) await registry.loadTools(dir);
  for (const tool of options.tools ?? []) registry.registerTool(tool);
  if (selfWriting) await enableSelfWriting(registry, selfWriting.toolsDir);
  return registry;
}
