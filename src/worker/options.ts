import type { DataConverter } from '@temporalio/common';
import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import type { CompactionFunction } from '../contract/types/compaction.ts';
import type { AgentEventSink } from '../contract/types/events.ts';
import type { WorkerGuardrails } from '../contract/types/guardrails.ts';
import type { AgentHooks } from '../contract/types/hooks.ts';
import type { McpServerConfig } from '../contract/types/mcp.ts';
import type { ModelDefinition, ModelOptions, ModelRoute, ModelSettings } from '../contract/types/models.ts';
import type { SelfWritingOptions } from '../contract/types/sandbox.ts';
import type { AgentTool } from '../contract/types/tools.ts';
import type { TemporalConnectionSettings } from '../infrastructure/connection.ts';
import type { TracingOptions } from '../infrastructure/tracing.ts';
import type { WorkerDeploymentSettings } from './deployment.ts';

/** Where the worker's Temporal is, which queue it polls and how its payloads travel. */
export interface WorkerConnectionOptions extends Omit<TemporalConnectionSettings, 'env'> {
  /** A connection to reuse; otherwise one is opened from the settings. */
  nativeConnection?: NativeConnection;
  /** Default: env `YIEM_TASK_QUEUE`, else `yiem-agent`. */
  taskQueue?: string;
  /**
   * How payloads are converted, encoded and stored, e.g. `encryptedDataConverter` (from `yiem-agent`). Default:
   * `dataConverterFromEnv`: the payload store of `YIEM_PAYLOADS_DIR` (default: the user's data folder, `defaultPayloadsDir`), encrypted
   * when `YIEM_CODEC_KEYS` or `YIEM_CODEC_KEY_FILE` is set. Workers and clients of one namespace
   * must use the same. Without `externalStorage` every message stays inline, and a conversation
   * stops at Temporal's 2 MB payload limit.
   */
  dataConverter?: DataConverter;
  /**
   * How long a finished result (a tool's, a model reply) whose payload store cannot take it is tried
   * again before the call fails, naming the store: a tool is not run again for it. Default: env
   * `YIEM_PAYLOAD_STORE_RETRY_MS`, else 2 minutes.
   */
  payloadStoreRetryMs?: number;
}

/** The worker's tools: by hand, from directories, built in, written by the model, and from MCP servers. */
export interface ToolOptions {
  /** Tools to register by hand (the seed's `registerTool`). */
  tools?: AgentTool[];
  /** Directories whose tool files are loaded in alphabetical order (the seed's `loadTools`). */
  toolsDir?: string | string[];
  /** Whether getWeather, getTime, listTools and readUserFile (run by `yiem chat`) are registered first. Default true. */
  builtinTools?: boolean;
  /** Tool results above this many bytes (text or details) are cut with a note to the model. Default 4 MB. */
  maxToolResultBytes?: number;
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
}

/** What runs around the agent's work: tool call hooks, guardrails, and the sink of the worker's events. */
export interface HookOptions {
  /** `beforeToolCall` and `afterToolCall`. */
  toolCalls?: AgentHooks;
  /**
   * Checks of the user's messages (`input`), the model's final replies (`output`) and tool results
   * (`toolResult`) that conversations and agents name (`ConversationOptions.guardrails`). They run
   * in the `runGuardrails` activity and may call the worker's model (`GuardrailContext.complete`).
   * Every worker of a task queue should register the same. Default: none.
   */
  guardrails?: WorkerGuardrails;
  /** Receives the worker's events (`toolExecutionStart`, …). */
  eventSink?: AgentEventSink;
}

/** How conversations' older turns are summarised. */
export interface CompactionOptions {
  /**
   * Writes the summaries of conversations' compactions instead of a model call (in the
   * `compactContext` activity). Default: the model, with the conversation's compaction prompt.
   */
  compact?: CompactionFunction;
}

/** A prebuilt workflow bundle (from `bundleWorkflowCode`). */
export interface WorkflowBundle {
  /** The bundle's JavaScript. */
  code: string;
}

/** What the Temporal worker runs, and any other option of Temporal's own. */
export interface TemporalWorkerOptions {
  /**
   * Whether this worker runs conversation workflows. Default true. A worker for a tool's dedicated
   * task queue (`AgentTool.taskQueue`) sets it to false and runs only that queue's tool activities.
   */
  workflows?: boolean;
  /** A prebuilt bundle (from `bundleWorkflowCode`), to skip bundling at start-up. */
  workflowBundle?: WorkflowBundle;
  /**
   * A model or tool call whose worker died this many times (attempts ended by a missed heartbeat:
   * killed, out of memory, crashed) fails for good, however many attempts its retry policy has
   * left; 0: never. A tool's `policy.maxWorkerDeaths` overrides it for that tool. Default 5.
   */
  maxWorkerDeaths?: number;
  /** Any other Temporal worker option, e.g. concurrency limits. */
  options?: Partial<WorkerOptions>;
}

/** The worker's options, one group per concern. */
export interface GroupedWorkerOptions {
  /** The environment to read; default `process.env`. Empty values count as unset. */
  env?: Record<string, string | undefined>;
  /** Where Temporal is, the task queue, the payloads' converter and store. */
  connection?: WorkerConnectionOptions;
  /** The worker's model, or its models by name with a default, fallbacks and a route. */
  models?: ModelOptions;
  /** Its tools: by hand, from directories, built in, written by the model, from MCP servers. */
  tools?: ToolOptions;
  /** Tool call hooks, guardrails and the event sink. */
  hooks?: HookOptions;
  /** How older turns are summarised. */
  compaction?: CompactionOptions;
  /** OpenTelemetry spans for conversations, turns, model calls and tool calls. Default off. */
  tracing?: TracingOptions;
  /**
   * Runs this worker as one build of a Temporal Worker Deployment (Worker Versioning). Default: env
   * `YIEM_DEPLOYMENT_NAME` and `YIEM_BUILD_ID`, else unversioned. See docs/operations.md, "Safe deploys".
   */
  deployment?: WorkerDeploymentSettings;
  /** Whether it runs workflows, a prebuilt bundle, Temporal's own worker options. */
  worker?: TemporalWorkerOptions;
}

/**
 * The flat names of the options before they were grouped. Each still works for one release, with a
 * deprecation warning naming its new place in the groups.
 */
export interface FlatWorkerOptions {
  /** @deprecated use `connection.address` */
  address?: string;
  /** @deprecated use `connection.namespace` */
  namespace?: string;
  /** @deprecated use `connection.apiKey` */
  apiKey?: string;
  /** @deprecated use `connection.profile` */
  profile?: string;
  /** @deprecated use `connection.configFile` */
  configFile?: string;
  /** @deprecated use `connection.taskQueue` */
  taskQueue?: string;
  /** @deprecated use `connection.dataConverter` */
  dataConverter?: DataConverter;
  /** @deprecated use `connection.payloadStoreRetryMs` */
  payloadStoreRetryMs?: number;
  /** @deprecated use `tools.toolsDir` */
  toolsDir?: string | string[];
  /** @deprecated use `tools.builtinTools` */
  builtinTools?: boolean;
  /** @deprecated use `tools.maxToolResultBytes` */
  maxToolResultBytes?: number;
  /** @deprecated use `tools.selfWriting` */
  selfWriting?: SelfWritingOptions;
  /** @deprecated use `tools.mcpServers` */
  mcpServers?: Record<string, McpServerConfig>;
  /** @deprecated use `tools.mcpSessionIdleMs` */
  mcpSessionIdleMs?: number;
  /** @deprecated use `models.model` */
  model?: ModelSettings;
  /** @deprecated use `models.defaultModel` */
  defaultModel?: string;
  /** @deprecated use `models.fallbacks` */
  fallbacks?: Record<string, string[]>;
  /** @deprecated use `models.route` */
  route?: ModelRoute;
  /** @deprecated use `models.maxRateLimitWaitMs` */
  maxRateLimitWaitMs?: number;
  /** @deprecated use `hooks.eventSink` */
  eventSink?: AgentEventSink;
  /** @deprecated use `hooks.guardrails` */
  guardrails?: WorkerGuardrails;
  /** @deprecated use `compaction.compact` */
  compact?: CompactionFunction;
  /** @deprecated use `worker.workflows` */
  workflows?: boolean;
  /** @deprecated use `worker.workflowBundle` */
  workflowBundle?: WorkflowBundle;
  /** @deprecated use `worker.options` */
  workerOptions?: Partial<WorkerOptions>;
}

/**
 * How a worker connects, what it runs, and with which models and tools, grouped by concern
 * ({@link GroupedWorkerOptions}). The flat names of earlier releases are still accepted for one
 * release; four of them share a group's name and are told apart by shape: `connection` given a
 * `NativeConnection`, `models` given models by name (a table whose keys are not the group's own),
 * `tools` given an array, `hooks` given `beforeToolCall`/`afterToolCall`.
 */
export interface AgentWorkerOptions
  extends Omit<GroupedWorkerOptions, 'connection' | 'models' | 'tools' | 'hooks'>,
    FlatWorkerOptions {
  /** {@link WorkerConnectionOptions}; a `NativeConnection` here is the old flat name of `connection.nativeConnection`. */
  connection?: WorkerConnectionOptions | NativeConnection;
  /** {@link ModelOptions}; models by name here are the old flat name of `models.models`. */
  models?: ModelOptions | Record<string, ModelDefinition>;
  /** {@link ToolOptions}; an array here is the old flat name of `tools.tools`. */
  tools?: ToolOptions | AgentTool[];
  /** {@link HookOptions}; `beforeToolCall`/`afterToolCall` here are the old flat name of `hooks.toolCalls`. */
  hooks?: HookOptions | AgentHooks;
}

type Group = 'connection' | 'models' | 'tools' | 'hooks' | 'compaction' | 'worker';

/** Each flat name's group, and its name there when it changed. */
const FLAT_OPTION_PLACES: Record<string, [Group, string?]> = {
  address: ['connection'],
  namespace: ['connection'],
  apiKey: ['connection'],
  profile: ['connection'],
  configFile: ['connection'],
  taskQueue: ['connection'],
  dataConverter: ['connection'],
  payloadStoreRetryMs: ['connection'],
  toolsDir: ['tools'],
  builtinTools: ['tools'],
  maxToolResultBytes: ['tools'],
  selfWriting: ['tools'],
  mcpServers: ['tools'],
  mcpSessionIdleMs: ['tools'],
  model: ['models'],
  defaultModel: ['models'],
  fallbacks: ['models'],
  route: ['models'],
  maxRateLimitWaitMs: ['models'],
  eventSink: ['hooks'],
  guardrails: ['hooks'],
  compact: ['compaction'],
  workflows: ['worker'],
  workflowBundle: ['worker'],
  workerOptions: ['worker', 'options'],
};

const MODEL_GROUP_KEYS = new Set([
  'model',
  'models',
  'defaultModel',
  'fallbacks',
  'route',
  'maxRateLimitWaitMs',
]);

/** The names warned about in this process: each is told once. */
const warned = new Set<string>();

function deprecated(name: string, place: string, warn: (message: string) => void): void {
  if (warned.has(name)) return;
  warned.add(name);
  warn(`yiem-agent: AgentWorkerOptions.${name} is deprecated; use ${place}`);
}

/**
 * The options grouped, old flat names moved to their groups with one warning per name per process.
 * A name given both ways takes the grouped value.
 */
export function groupWorkerOptions(
  options: AgentWorkerOptions,
  warn: (message: string) => void = console.warn,
): GroupedWorkerOptions {
  const { connection, models, tools, hooks } = splitSharedNames(options, warn);
  const groups: Record<Group, Record<string, unknown>> = {
    connection,
    models,
    tools,
    hooks,
    compaction: { ...options.compaction },
    worker: { ...options.worker },
  };
  const flat = options as Record<string, unknown>;
  for (const [name, [group, renamed]] of Object.entries(FLAT_OPTION_PLACES)) {
    if (flat[name] === undefined) continue;
    const key = renamed ?? name;
    deprecated(name, `${group}.${key}`, warn);
    groups[group][key] ??= flat[name];
  }
  return {
    ...(options.env ? { env: options.env } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    ...(options.deployment ? { deployment: options.deployment } : {}),
    ...(groups as Required<Pick<GroupedWorkerOptions, Group>>),
  };
}

/** The four groups whose names the flat options used too, each read by its shape. */
function splitSharedNames(
  options: AgentWorkerOptions,
  warn: (message: string) => void,
): Record<'connection' | 'models' | 'tools' | 'hooks', Record<string, unknown>> {
  const { connection, models, tools, hooks } = options;
  const moved = (name: string, place: string, value: unknown): Record<string, unknown> => {
    deprecated(name, place, warn);
    return { [place.split('.')[1] ?? '']: value };
  };
  return {
    connection: isNativeConnection(connection)
      ? moved('connection', 'connection.nativeConnection', connection)
      : { ...connection },
    models:
      models && !isModelGroup(models)
        ? moved('models', 'models.models', models)
        : { ...(models as ModelOptions) },
    tools: Array.isArray(tools) ? moved('tools', 'tools.tools', tools) : { ...tools },
    hooks: hooks && isToolCallHooks(hooks) ? moved('hooks', 'hooks.toolCalls', hooks) : { ...hooks },
  };
}

/** A `NativeConnection`, told by its methods: a test or an application may load its own copy of the class. */
function isNativeConnection(value: unknown): value is NativeConnection {
  return typeof (value as { close?: unknown } | undefined)?.close === 'function';
}

function isModelGroup(value: object): value is ModelOptions {
  return Object.keys(value).every((key) => MODEL_GROUP_KEYS.has(key));
}

function isToolCallHooks(value: object): value is AgentHooks {
  return 'beforeToolCall' in value || 'afterToolCall' in value;
}
