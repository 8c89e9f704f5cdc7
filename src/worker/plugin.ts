import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { SimplePlugin } from '@temporalio/plugin';
import type { InjectedSinks, ReplayWorkerOptions, Worker, WorkerOptions } from '@temporalio/worker';
import { safeSink } from '../../activities/execute.ts';
import { type AgentActivityDependencies, agentActivityParts } from '../../activities/index.ts';
import { describeModels, modelTableOf } from '../../activities/models/models.ts';
import {
  identityWithSignature,
  TaskQueueNeighbours,
  workerSignature,
} from '../../activities/taskQueueNeighbours.ts';
import type { AgentActivities, AgentEventSinks } from '../contract/protocol.ts';
import {
  missingSearchAttributes,
  missingSearchAttributesMessage,
} from '../infrastructure/server/searchAttributeCheck.ts';
import { LiveChannel } from '../infrastructure/storage/liveChannel.ts';
import { runWithSessionWorker, sessionQueueName } from './mcp/sessionWorker.ts';
import { McpToolSource } from './mcp/source.ts';
import type { TemporalWorkerOptions, ToolOptions } from './options.ts';

/** `.ts` when running from the sources, `.js` from the built package. */
const MODULE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The module that exports `conversationWorkflow`, for workers that bundle it themselves. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(
  new URL(`../../workflows/index${MODULE_EXTENSION}`, import.meta.url),
);

/**
 * What `AgentPlugin` adds besides the activities: the conversation workflow unless `workflows` is
 * false (when the worker brings none of its own), and the tools of MCP servers, started when the
 * worker runs (or by `startMcpServers()`) and stopped with it. The same options as the worker's.
 */
export type AgentPluginOptions = Pick<ToolOptions, 'mcpServers' | 'mcpSessionIdleMs'> &
  Pick<TemporalWorkerOptions, 'workflows'>;

/**
 * Adds yiem's activities to any Temporal worker (`callModel`, which also runs PREPARE; `executeTool`,
 * EXECUTE and FINALIZE; and small lookups), and its workflows when the worker brings none of its own.
 * A worker with its own workflows module should re-export `conversationWorkflow` from it. With
 * `workflows: false` it adds only the activities, for a worker on a tool's dedicated task queue.
 * Model calls read their context through the worker's own client.
 */
export class AgentPlugin extends SimplePlugin {
  /** The activities it registers on the worker, for a worker built by hand to register them itself. */
  readonly activities: AgentActivities;
  readonly #mcp: McpToolSource | undefined;
  #sessionQueue: string | undefined;
  #workerOptions: WorkerOptions | undefined;
  readonly #sinks: InjectedSinks<AgentEventSinks>;
  readonly #dependencies: AgentActivityDependencies;
  readonly #runsModelCalls: boolean;
  readonly #neighbours: TaskQueueNeighbours;
  /** Where conversations' events are copied for followers: the worker's file store's live channel. */
  #liveChannel: LiveChannel | undefined;

  constructor(dependencies: AgentActivityDependencies, options: AgentPluginOptions = {}) {
    const neighbours = new TaskQueueNeighbours(dependencies.log ?? console.warn);
    const models = modelTableOf(dependencies);
    const { activities, contexts } = agentActivityParts({ ...dependencies, models, neighbours });
    super({
      name: 'yiem-agent',
      activities,
      ...(options.workflows === false
        ? {}
        : { workflowsPath: (ownPath: string | undefined) => ownPath ?? AGENT_WORKFLOWS_PATH }),
    });
    this.activities = activities;
    this.#dependencies = { ...dependencies, models };
    this.#runsModelCalls = options.workflows !== false;
    this.#neighbours = neighbours;
    const servers = options.mcpServers ?? {};
    this.#mcp =
      Object.keys(servers).length === 0
        ? undefined
        : new McpToolSource(servers, {
            registry: dependencies.registry,
            getClient: dependencies.getClient ?? (async () => Context.current().client),
            sessionQueue: () => this.#sessionQueue,
            ...(options.mcpSessionIdleMs ? { sessionIdleMs: options.mcpSessionIdleMs } : {}),
            ...(dependencies.log ? { log: dependencies.log } : {}),
          });
    // Sub-agent, handoff and callback calls run in the workflow; their events reach the sink too.
    const warn = dependencies.log ?? console.warn;
    const emit = safeSink(dependencies.eventSink, warn);
    this.#sinks = {
      yiemAgentEvents: { emit: { fn: (_info, event) => emit(event), callDuringReplay: false } },
      yiemLiveEvents: {
        append: {
          fn: ({ namespace, workflowId }, entries) =>
            this.#liveChannel?.copy(namespace, workflowId, entries, warn),
          callDuringReplay: false,
        },
      },
      // The model calls this worker runs next read these entries from its cache, not by query.
      yiemModelContext: {
        append: {
          fn: ({ workflowId }, transcriptId, tail) => contexts.feed(workflowId, transcriptId, tail),
          callDuringReplay: false,
        },
      },
    };
  }

  /**
   * Starts the MCP servers and registers their tools now, so a server that does not start fails the
   * worker's start-up with a clear error. Running the worker does it too.
   */
  async startMcpServers(): Promise<void> {
    try {
      await this.#mcp?.start();
    } catch (error) {
      await this.closeMcpServers();
      throw error;
    }
  }

  /** Stops the MCP servers and closes their sessions; running the worker does it when the worker stops. */
  async closeMcpServers(): Promise<void> {
    await this.#mcp?.close();
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    this.#workerOptions = options;
    if (this.#mcp?.hasStatefulServers) this.#sessionQueue ??= sessionQueueName(options.taskQueue);
    const models = this.#runsModelCalls ? describeModels(modelTableOf(this.#dependencies)) : undefined;
    const signature = workerSignature(models, this.#dependencies.registry.names());
    this.#liveChannel = LiveChannel.of(loadDataConverter(options.dataConverter));
    const identity = identityWithSignature(options.identity, signature, this.#liveChannel !== undefined);
    this.#neighbours.bind(identity, signature, models);
    const configured = {
      ...super.configureWorker(options),
      identity,
      sinks: { ...options.sinks, ...this.#sinks },
    };
    // A prebuilt bundle brings the worker's workflows: no path goes beside it.
    return options.workflowBundle ? { ...configured, workflowsPath: options.workflowsPath } : configured;
  }

  /** Says at start when other workers of the queue serve another model or other tools. */
  #lookAtTaskQueue(): void {
    const { connection, namespace = 'default', taskQueue } = this.#workerOptions ?? {};
    if (!connection || !taskQueue) return;
    this.#neighbours
      .differing(connection.workflowService, namespace, taskQueue, { fresh: true })
      .then((differing) => this.#neighbours.warn(differing, taskQueue))
      .catch(() => {
        // Only a warning: a server that cannot describe queues still runs the worker.
      });
  }

  /**
   * Says at start which of yiem's search attributes the namespace lacks and how to add them: its
   * conversations still run (started without them), but cannot be listed or searched by them.
   */
  #lookAtSearchAttributes(): void {
    const { connection, namespace = 'default' } = this.#workerOptions ?? {};
    if (!connection || !this.#runsModelCalls) return;
    const warn = this.#dependencies.log ?? console.warn;
    missingSearchAttributes(connection.operatorService, namespace)
      .then((missing) => {
        if (missing.length > 0) warn(missingSearchAttributesMessage(namespace, missing));
      })
      .catch(() => {
        // Only a warning: a server (or Cloud key) that may not list them still runs the worker.
      });
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    return options.workflowBundle ? { ...configured, workflowsPath: options.workflowsPath } : configured;
  }

  override async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    this.#lookAtTaskQueue();
    this.#lookAtSearchAttributes();
    if (!this.#mcp) return super.runWorker(worker, next);
    try {
      await this.#mcp.start();
      const sessionQueue = this.#sessionQueue;
      if (!sessionQueue) return await super.runWorker(worker, next);
      const { connection, namespace, dataConverter } = this.#workerOptions ?? {};
      await runWithSessionWorker(worker, next, {
        sessionQueue,
        executeTool: this.activities.executeTool,
        ...(connection ? { connection } : {}),
        ...(namespace ? { namespace } : {}),
        ...(dataConverter ? { dataConverter } : {}),
      });
    } finally {
      await this.closeMcpServers();
    }
  }
}
