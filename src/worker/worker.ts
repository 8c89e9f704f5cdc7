import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
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
import { dataConverterFromEnv, storeAnnouncementOf } from '../infrastructure/codec/dataConverter.ts';
import { refusingUnencrypted } from '../infrastructure/codec/refusingCodec.ts';
import { resolveTemporalConnection, unreachableServerMessage } from '../infrastructure/connection.ts';
import { assertSupportedNode } from '../infrastructure/nodeVersion.ts';
import { describeStore, identityWithStore } from '../infrastructure/storage/payloadStoreIdentity.ts';
import { startTracing } from '../infrastructure/tracing.ts';
import { unversionedBuildId } from './buildId.ts';
import { workerDeploymentOptions } from './deployment.ts';
import { workerEnvironment } from './environment.ts';
import {
  type AgentWorkerOptions,
  type GroupedWorkerOptions,
  groupWorkerOptions,
  type TemporalWorkerOptions,
  type ToolOptions,
} from './options.ts';
import { AgentPlugin } from './plugin.ts';
import { installWorkerRuntime } from './runtime.ts';
import { installWorkerLog } from './workerLog.ts';

export { loadModelsConfig } from '../../activities/models/modelsFile.ts';
export { installWorkerLog, workerLogFile } from './workerLog.ts';
export type { AgentWorkerOptions };
export { DEFAULT_TASK_QUEUE };

/** The built-in tools shipped in this package (getWeather, getTime, listTools, and the callback tool readUserFile). */
export const BUILTIN_TOOLS_DIR = fileURLToPath(new URL('../../tools/', import.meta.url));

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
export async function createAgentWorker(given: AgentWorkerOptions = {}): Promise<AgentWorker> {
  assertSupportedNode();
  const options = groupWorkerOptions(given);
  const setup = await resolveWorkerSetup(options);
  const reused = options.connection?.nativeConnection;
  const ownsConnection = !reused;
  // Before the connection instantiates the SDK's runtime, which would heartbeat once a minute.
  if (!reused) installWorkerRuntime();
  const connection = reused ?? (await connectWorker(setup.connectionOptions));
  const plugin = createPlugin(options, setup);
  let workers: Worker[];
  try {
    await plugin.startMcpServers();
    workers = await createWorkers(options.worker ?? {}, setup, plugin, connection);
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

async function resolveWorkerSetup(options: GroupedWorkerOptions): Promise<WorkerSetup> {
  const env = workerEnvironment(options.env);
  const connectionSettings = options.connection ?? {};
  const { connectionOptions, namespace } = resolveTemporalConnection({ ...connectionSettings, env });
  const taskQueue = connectionSettings.taskQueue ?? (env.YIEM_TASK_QUEUE || DEFAULT_TASK_QUEUE);
  installWorkerLog(taskQueue, env);
  const dataConverter = connectionSettings.dataConverter ?? dataConverterFromEnv(env);
  // Checked before anything connects: a bad endpoint would otherwise fail every turn.
  const models = resolveModelTable(options.models ?? {}, env);
  const guardrails = options.hooks?.guardrails;
  if (guardrails) checkGuardrailRegistration(guardrails);
  const tracing = startTracing(options.tracing);
  const registry = await buildRegistry(options.tools ?? {});
  // Announced in the worker's identity so clients and `yiem doctor` can tell a split store or key set.
  const announcement = await storeAnnouncementOf(dataConverter);
  const identity = identityWithStore(
    options.worker?.options?.identity ?? `${process.pid}@${os.hostname()}`,
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

function createPlugin(options: GroupedWorkerOptions, setup: WorkerSetup): AgentPlugin {
  const { hooks = {}, tools = {} } = options;
  const compact = options.compaction?.compact;
  return new AgentPlugin(
    {
      registry: setup.registry,
      models: setup.models,
      ...(hooks.toolCalls ? { hooks: hooks.toolCalls } : {}),
      ...(hooks.eventSink ? { eventSink: hooks.eventSink } : {}),
      ...(tools.maxToolResultBytes ? { maxToolResultBytes: tools.maxToolResultBytes } : {}),
      ...(tools.batchedTools ? { batchedTools: true } : {}),
      ...payloadStoreRetry(options.connection?.payloadStoreRetryMs, setup.env),
      ...(options.worker?.maxWorkerDeaths === undefined
        ? {}
        : { maxWorkerDeaths: options.worker.maxWorkerDeaths }),
      ...(compact ? { compact } : {}),
      ...(hooks.guardrails ? { guardrails: hooks.guardrails } : {}),
      ...(setup.tracing ? { tracer: setup.tracing.tracer } : {}),
    },
    {
      workflows: options.worker?.workflows ?? true,
      ...(tools.mcpServers ? { mcpServers: tools.mcpServers } : {}),
      ...(tools.mcpSessionIdleMs ? { mcpSessionIdleMs: tools.mcpSessionIdleMs } : {}),
    },
  );
}

/** The agent's worker first, then one per rate-limited model's task queue. */
async function createWorkers(
  options: TemporalWorkerOptions,
  setup: WorkerSetup,
  plugin: AgentPlugin,
  connection: NativeConnection,
): Promise<Worker[]> {
  const { namespace, taskQueue, dataConverter, deployment, tracing } = setup;
  const converter = dataConverter ? { dataConverter: workerDataConverter(dataConverter) } : {};
  const bundle = options.workflows === false ? undefined : options.workflowBundle;
  const buildId = deployment ? {} : await unversionedBuildId(bundle, options.options);
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(bundle ? { workflowBundle: bundle } : {}),
    ...converter,
    ...(deployment ? { workerDeploymentOptions: deployment } : buildId),
    ...options.options,
    identity: setup.identity,
    plugins: [plugin, ...(tracing?.plugins ?? []), ...(options.options?.plugins ?? [])],
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
      ...buildId,
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
  given: number | undefined,
  env: Record<string, string | undefined>,
): { payloadStoreRetryMs?: number } {
  if (given !== undefined) return { payloadStoreRetryMs: given };
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

async function buildRegistry(options: ToolOptions): Promise<ToolRegistry> {
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
