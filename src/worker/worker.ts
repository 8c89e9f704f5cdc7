import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { checkGuardrailRegistration } from '../../activities/guardrails.ts';
import {
  describeModels,
  modelQueueName,
  resolveModelTable,
  routingInfo,
} from '../../activities/models/models.ts';
import { ToolRegistry } from '../../activities/registry/registry.ts';
import { enableSelfWriting } from '../../activities/selfWriting/writeTool.ts';
import { DEFAULT_TASK_QUEUE } from '../contract/taskQueue.ts';
import type { CompactionFunction } from '../contract/types/compaction.ts';
import type { AgentEventSink } from '../contract/types/events.ts';
import type { WorkerGuardrails } from '../contract/types/guardrails.ts';
import type { AgentHooks } from '../contract/types/hooks.ts';
import type { McpServerConfig } from '../contract/types/mcp.ts';
import type { ModelDefinition, ModelRoute, ModelSettings } from '../contract/types/models.ts';
import type { SelfWritingOptions } from '../contract/types/sandbox.ts';
import type { AgentTool } from '../contract/types/tools.ts';
import { dataConverterFromEnv, storeAnnouncementOf } from '../infrastructure/codec/dataConverter.ts';
import { refusingUnencrypted } from '../infrastructure/codec/refusingCodec.ts';
import {
  resolveTemporalConnection,
  type TemporalConnectionSettings,
  unreachableServerMessage,
} from '../infrastructure/connection.ts';
import { assertSupportedNode } from '../infrastructure/nodeVersion.ts';
import { describeStore, identityWithStore } from '../infrastructure/storage/payloadStoreIdentity.ts';
import { startTracing, type TracingOptions } from '../infrastructure/tracing.ts';
import { type WorkerDeploymentSettings, workerDeploymentOptions } from './deployment.ts';
import { AgentPlugin } from './plugin.ts';
import { installWorkerLog } from './workerLog.ts';

export { loadModelsConfig } from '../../activities/models/modelsFile.ts';
export { installWorkerLog, workerLogFile } from './workerLog.ts';
export { DEFAULT_TASK_QUEUE };

/** The built-in tools shipped in this package (getWeather, getTime, listTools, and the callback tool readUserFile). */
export const BUILTIN_TOOLS_DIR = fileURLToPath(new URL('../../tools/', import.meta.url));

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
   * How payloads are converted, encoded and stored, e.g. `encryptedDataConverter` (from `yiem-agent`). Default:
   * `dataConverterFromEnv`: the payload store of `YIEM_PAYLOADS_DIR` (default: the user's data folder, `defaultPayloadsDir`), encrypted
   * when `YIEM_CODEC_KEYS` or `YIEM_CODEC_KEY_FILE` is set. Workers and clients of one namespace
   * must use the same. Without `externalStorage` every message stays inline, and a conversation
   * stops at Temporal's 2 MB payload limit.
   */
  dataConverter?: DataConverter;
  /** OpenTelemetry spans for conversations, turns, model calls and tool calls. Default off. */
  tracing?: TracingOptions;
  /** Tools to register by hand (the seed's `registerTool`). */
  tools?: AgentTool[];
  /** Directories whose tool files are loaded in alphabetical order (the seed's `loadTools`). */
  toolsDir?: string | string[];
  /** Whether getWeather, getTime, listTools and readUserFile (run by `yiem chat`) are registered first. Default true. */
  builtinTools?: boolean;
  /** The worker's one model: where its calls go, with what key, settings and prices. Or `models`. */
  model?: ModelSettings;
  /**
   * Several models by name, each with its own endpoint, key, settings, price and rate limit.
   * Conversations pick one by name (`ConversationOptions.model`, `PromptOptions.model`), or `route`
   * does. Names and keys stay on the worker: history only ever holds the names.
   */
  models?: Record<string, ModelDefinition>;
  /** The model of calls that name none. Default: the first of `models`. */
  defaultModel?: string;
  /**
   * Per model, the models tried in order when it cannot answer (connection refused, timeout, 5xx, a
   * 429 asking for more than `maxRateLimitWaitMs`), within the same model call; each switch is a
   * `modelFallback` event and is recorded on the reply (`AssistantMessage.fallbacks`).
   */
  fallbacks?: Record<string, string[]>;
  /** Picks each model call's model (see `ModelRoute`); it runs in a `routeModel` activity before the call. */
  route?: ModelRoute;
  /** A 429 asking to wait longer than this (or not saying how long) moves to the next fallback. Default 10 000 ms. */
  maxRateLimitWaitMs?: number;
  /** `beforeToolCall` and `afterToolCall`, around every tool call this worker runs. Default: none. */
  hooks?: AgentHooks;
  /** Receives this worker's tool events as they happen (see `AgentEvent`). Default: none. */
  eventSink?: AgentEventSink;
  /** Tool results above this many bytes (text or details) are cut with a note to the model. Default 4 MB. */
  maxToolResultBytes?: number;
  /**
   * Writes the summaries of conversations' compactions instead of a model call (in the
   * `compactContext` activity). Default: the model, with the conversation's compaction prompt.
   */
  compact?: CompactionFunction;
  /**
   * Checks of the user's messages (`input`), the model's final replies (`output`) and tool results
   * (`toolResult`) that conversations and agents name (`ConversationOptions.guardrails`). They run
   * in the `runGuardrails` activity and may call the worker's model (`GuardrailContext.complete`).
   * Every worker of a task queue should register the same. Default: none.
   */
  guardrails?: WorkerGuardrails;
  /** A prebuilt bundle (from `bundleWorkflowCode`), to skip bundling at start-up. */
  workflowBundle?: {
    /** The bundle's JavaScript. */
    code: string;
  };
  /**
   * Turns on writeTool (off by default: a model calling it is told this worker does not allow it).
   * Written tools go to `toolsDir`, run in a sandbox with these limits, and are picked up without a
   * restart by every worker that watches the same directory.
   */
  selfWriting?: SelfWritingOptions;
  /**
   * MCP servers whose tools the worker offers beside its own, as `<server>__<tool>`, by server name
   * (`yiem worker --mcp FILE` reads them from a file, see `loadMcpConfig`). They start with the worker,
   * which fails to start when one does not.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /** Sessions of stateful MCP servers (`session: 'conversation'`) idle this long are closed. Default 15 minutes. */
  mcpSessionIdleMs?: number;
  /**
   * How long a finished result (a tool's, a model reply) whose payload store cannot take it is tried
   * again before the call fails, naming the store: a tool is not run again for it. Default: env
   * `YIEM_PAYLOAD_STORE_RETRY_MS`, else 2 minutes.
   */
  payloadStoreRetryMs?: number;
  /**
   * Runs this worker as one build of a Temporal Worker Deployment (Worker Versioning). Default: env
   * `YIEM_DEPLOYMENT_NAME` and `YIEM_BUILD_ID`, else unversioned. See docs/operations.md, "Safe deploys".
   */
  deployment?: WorkerDeploymentSettings;
  /** Any other Temporal worker option, e.g. concurrency limits. */
  workerOptions?: Partial<WorkerOptions>;
}

/** A running agent worker and the registry it serves tools from. */
export interface AgentWorker {
  /** The Temporal worker, for what this interface does not wrap. */
  worker: Worker;
  /** The tools it loaded (and those written or added since). */
  registry: ToolRegistry;
  /** The task queue it polls. */
  taskQueue: string;
  /** Where its model calls go: `model <name> at <endpoint>` (each of `models`: `<name>: model … at …`), for start lines and logs. */
  model: string;
  /** The task queues of its rate-limited models, by model name. */
  modelQueues: Record<string, string>;
  /** Where its large payloads go (`<folder> (store <id>)`), or `inline` without a store it can name. */
  payloadStore: string;
  /** Its Worker Deployment version (`<name> build <id>`), or undefined when unversioned. */
  deployment: string | undefined;
  /** Runs until `shutdown()`; resolves when the worker has stopped. */
  run(): Promise<void>;
  /** Stops polling, waits for `run()` to end, and closes the worker's MCP servers. */
  shutdown(): Promise<void>;
}

/** Loads the tools and creates a Temporal worker that runs conversations and their activities. */
export async function createAgentWorker(options: AgentWorkerOptions = {}): Promise<AgentWorker> {
  assertSupportedNode();
  const setup = await resolveWorkerSetup(options);
  const ownsConnection = !options.connection;
  const connection = options.connection ?? (await connectWorker(setup.connectionOptions));
  const plugin = createPlugin(options, setup);
  let workers: Worker[];
  try {
    await plugin.startMcpServers();
    workers = await createWorkers(options, setup, plugin, connection);
  } catch (error) {
    await plugin.closeMcpServers();
    if (ownsConnection) await connection.close();
    throw error;
  }
  const [worker] = workers as [Worker, ...Worker[]];
  const closeConnection = async (): Promise<void> => {
    if (ownsConnection) await connection.close();
  };
  const run = runTogether(workers, closeConnection);
  const { models, taskQueue, announcement, deployment } = setup;
  return {
    worker,
    registry: setup.registry,
    taskQueue,
    model: describeModels(models),
    modelQueues: routingInfo(models, taskQueue).queues,
    payloadStore: announcement.store ? describeStore(announcement.store) : 'inline',
    deployment: deployment
      ? `${deployment.version.deploymentName} build ${deployment.version.buildId}`
      : undefined,
    run,
    async shutdown() {
      for (const each of workers) if (each.getState() === 'RUNNING') each.shutdown();
      await run.running();
      // A worker that never ran still started its MCP servers.
      await plugin.closeMcpServers();
    },
  };
}

/** What a worker is built from, resolved from its options and environment before anything connects. */
interface WorkerSetup {
  connectionOptions: ReturnType<typeof resolveTemporalConnection>['connectionOptions'];
  namespace: string;
  env: Record<string, string | undefined>;
  taskQueue: string;
  dataConverter: DataConverter | undefined;
  models: ReturnType<typeof resolveModelTable>;
  tracing: ReturnType<typeof startTracing>;
  registry: ToolRegistry;
  announcement: Awaited<ReturnType<typeof storeAnnouncementOf>>;
  identity: string;
  deployment: ReturnType<typeof workerDeploymentOptions>;
}

async function resolveWorkerSetup(options: AgentWorkerOptions): Promise<WorkerSetup> {
  const { connectionOptions, namespace } = resolveTemporalConnection(options);
  const env = options.env ?? process.env;
  const taskQueue = options.taskQueue ?? (env.YIEM_TASK_QUEUE || DEFAULT_TASK_QUEUE);
  installWorkerLog(taskQueue, env);
  const dataConverter = options.dataConverter ?? dataConverterFromEnv(env);
  // Checked before anything connects: a bad endpoint would otherwise fail every turn.
  const models = resolveModelTable(options, env);
  if (options.guardrails) checkGuardrailRegistration(options.guardrails);
  const tracing = startTracing(options.tracing);
  const registry = await buildRegistry(options);
  // Announced in the worker's identity so clients and `yiem doctor` can tell a split store or key set.
  const announcement = await storeAnnouncementOf(dataConverter);
  const identity = identityWithStore(
    options.workerOptions?.identity ?? `${process.pid}@${os.hostname()}`,
    announcement,
  );
  const deployment = workerDeploymentOptions(options.deployment, env);
  return {
    connectionOptions,
    namespace,
    env,
    taskQueue,
    dataConverter,
    models,
    tracing,
    registry,
    announcement,
    identity,
    deployment,
  };
}

function createPlugin(options: AgentWorkerOptions, setup: WorkerSetup): AgentPlugin {
  return new AgentPlugin(
    {
      registry: setup.registry,
      models: setup.models,
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.eventSink ? { eventSink: options.eventSink } : {}),
      ...(options.maxToolResultBytes ? { maxToolResultBytes: options.maxToolResultBytes } : {}),
      ...payloadStoreRetry(options, setup.env),
      ...(options.compact ? { compact: options.compact } : {}),
      ...(options.guardrails ? { guardrails: options.guardrails } : {}),
      ...(setup.tracing ? { tracer: setup.tracing.tracer } : {}),
    },
    {
      workflows: options.workflows ?? true,
      ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
      ...(options.mcpSessionIdleMs ? { mcpSessionIdleMs: options.mcpSessionIdleMs } : {}),
    },
  );
}

/** The agent's worker first, then one per rate-limited model's task queue. */
async function createWorkers(
  options: AgentWorkerOptions,
  setup: WorkerSetup,
  plugin: AgentPlugin,
  connection: NativeConnection,
): Promise<Worker[]> {
  const { namespace, taskQueue, dataConverter, deployment, tracing } = setup;
  const converter = dataConverter ? { dataConverter: workerDataConverter(dataConverter) } : {};
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(options.workflowBundle && options.workflows !== false
      ? { workflowBundle: options.workflowBundle }
      : {}),
    ...converter,
    ...(deployment ? { workerDeploymentOptions: deployment } : {}),
    ...options.workerOptions,
    identity: setup.identity,
    plugins: [plugin, ...(tracing?.plugins ?? []), ...(options.workerOptions?.plugins ?? [])],
  });
  const workers = [worker];
  if (options.workflows === false) return workers;
  for (const model of setup.models.models.values()) {
    if (!model.rateLimit) continue;
    const modelWorker = await Worker.create({
      connection,
      namespace,
      taskQueue: modelQueueName(taskQueue, model.name),
      // Every model call of a conversation: the turn's, and a compaction's summary.
      activities: {
        callModel: plugin.activities.callModel,
        compactContext: plugin.activities.compactContext,
      },
      // Set on every poll and enforced by the server for all the queue's workers together.
      maxTaskQueueActivitiesPerSecond: model.rateLimit.requestsPerMinute / 60,
      ...converter,
      identity: worker.options.identity,
      plugins: tracing?.plugins ?? [],
    });
    workers.push(modelWorker);
  }
  return workers;
}

/**
 * Runs the workers together, once however often it is called; one stopping (shutdown, a fatal
 * error) stops the others: they serve one agent. `running()` is that run, if it started.
 */
function runTogether(
  workers: Worker[],
  closeConnection: () => Promise<void>,
): (() => Promise<void>) & { running(): Promise<void> | undefined } {
  let running: Promise<void> | undefined;
  const run = (): Promise<void> => {
    running ??= Promise.all(
      workers.map((each) =>
        each.run().finally(() => {
          for (const other of workers) if (other.getState() === 'RUNNING') other.shutdown();
        }),
      ),
    )
      .then(() => undefined)
      .finally(closeConnection);
    return running;
  };
  return Object.assign(run, { running: () => running });
}

/** `payloadStoreRetryMs`, else `YIEM_PAYLOAD_STORE_RETRY_MS`; absent: the activities' default. */
function payloadStoreRetry(
  options: AgentWorkerOptions,
  env: Record<string, string | undefined>,
): { payloadStoreRetryMs?: number } {
  if (options.payloadStoreRetryMs !== undefined) return { payloadStoreRetryMs: options.payloadStoreRetryMs };
  const text = env.YIEM_PAYLOAD_STORE_RETRY_MS;
  if (!text) return {};
  if (!/^\d+$/.test(text))
    throw new Error(`YIEM_PAYLOAD_STORE_RETRY_MS=${text}: expected a number of milliseconds`);
  return { payloadStoreRetryMs: Number(text) };
}

/** The converter with each codec refusing unencrypted input per payload (see {@link refusingUnencrypted}). */
function workerDataConverter(converter: DataConverter): DataConverter {
  if (!converter.payloadCodecs) return converter;
  return { ...converter, payloadCodecs: converter.payloadCodecs.map(refusingUnencrypted) };
}

async function buildRegistry(options: AgentWorkerOptions): Promise<ToolRegistry> {
  const { selfWriting } = options;
  const registry = new ToolRegistry(selfWriting ? { sandbox: selfWriting } : {});
  if (options.builtinTools ?? true) await registry.loadTools(BUILTIN_TOOLS_DIR);
  const dirs = options.toolsDir === undefined ? [] : [options.toolsDir].flat();
  for (const dir of dirs) await registry.loadTools(dir);
  for (const tool of options.tools ?? []) registry.registerTool(tool);
  if (selfWriting) await enableSelfWriting(registry, selfWriting.toolsDir);
  assertAgentToolsRegistered(registry);
  return registry;
}

/** An agent given a tool this worker does not have would silently work without it: refuse to start. */
function assertAgentToolsRegistered(registry: ToolRegistry): void {
  for (const tool of registry.tools()) {
    const { runner } = tool;
    if (runner?.kind !== 'subAgent' && runner?.kind !== 'handoff') continue;
    const missing = (runner.agent.tools ?? []).filter((name) => !registry.has(name));
    if (missing.length > 0) {
      throw new Error(
        `Agent "${runner.agent.name}" (tool "${tool.name}") is given tools this worker does not register: ${missing.join(', ')}`,
      );
    }
  }
}

/**
 * Connects the worker; a server that is not there is named by its address with what to start, as the
 * client names it, rather than by the bridge's `TransportError(… ConnectError …)`.
 */
async function connectWorker(
  connectionOptions: ReturnType<typeof resolveTemporalConnection>['connectionOptions'],
): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(connectionOptions);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    if (!/Transport|Connect|refused|dns|unavailable/i.test(`${(error as Error)?.name} ${detail}`))
      throw error;
    throw new Error(unreachableServerMessage(connectionOptions.address, detail), { cause: error });
  }
}
