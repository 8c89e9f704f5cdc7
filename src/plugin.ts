import { fileURLToPath } from 'node:url';
import type {
  InjectedSinks,
  ReplayWorkerOptions,
  Worker,
  WorkerOptions,
  WorkerPlugin,
} from '@temporalio/worker';
import { safeSink } from '../activities/execute.ts';
import { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
import type { AgentEventSinks } from '../workflows/eventSink.ts';
import { runWithSessionWorker, sessionQueueName } from './mcp/sessionWorker.ts';
import { McpToolSource } from './mcp/source.ts';
import type { AgentActivities } from './protocol.ts';
import type { McpServerConfig } from './types.ts';

/** The module that exports `conversationWorkflow`, for workers that bundle it themselves. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** What `AgentPlugin` adds besides the activities. */
export interface AgentPluginOptions {
  /** Whether it adds the conversation workflow (when the worker brings none). Default true. */
  workflows?: boolean;
  /**
   * MCP servers whose tools this worker offers as `<server>__<tool>`, by server name. They are started
   * when the worker runs (or by `startMcpServers()`), and stopped with it.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /** Sessions of stateful MCP servers (`session: 'conversation'`) idle this long are closed. Default 15 minutes. */
  mcpSessionIdleMs?: number;
}

/**
 * Adds yiem's activities (model call, PREPARE, EXECUTE) to any Temporal worker, and its workflows
 * when the worker brings none of its own. A worker with its own workflows module should re-export
 * `conversationWorkflow` from it. With `workflows: false` it adds only the activities, for a worker
 * on a tool's dedicated task queue.
 */
export class AgentPlugin implements WorkerPlugin {
  readonly name = 'yiem-agent';
  readonly activities: AgentActivities;
  readonly #workflows: boolean;
  readonly #mcp: McpToolSource | undefined;
  #sessionQueue: string | undefined;
  #workerOptions: WorkerOptions | undefined;
  readonly #sinks: InjectedSinks<AgentEventSinks>;

  constructor(dependencies: AgentActivityDependencies, options: AgentPluginOptions = {}) {
    this.activities = createAgentActivities(dependencies);
    this.#workflows = options.workflows ?? true;
    const servers = options.mcpServers ?? {};
    this.#mcp =
      Object.keys(servers).length === 0
        ? undefined
        : new McpToolSource(servers, {
            registry: dependencies.registry,
            getClient: dependencies.getClient,
            sessionQueue: () => this.#sessionQueue,
            ...(options.mcpSessionIdleMs ? { sessionIdleMs: options.mcpSessionIdleMs } : {}),
            ...(dependencies.log ? { log: dependencies.log } : {}),
          });
    // Sub-agent, handoff and callback calls run in the workflow; their events reach the sink too.
    const emit = safeSink(dependencies.eventSink, dependencies.log ?? console.warn);
    this.#sinks = {
      yiemAgentEvents: { emit: { fn: (_info, event) => emit(event), callDuringReplay: false } },
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

  configureWorker(options: WorkerOptions): WorkerOptions {
    this.#workerOptions = options;
    if (this.#mcp?.hasStatefulServers) this.#sessionQueue ??= sessionQueueName(options.taskQueue);
    return {
      ...options,
      activities: { ...options.activities, ...this.activities },
      sinks: { ...options.sinks, ...this.#sinks },
      ...(options.workflowsPath || options.workflowBundle || !this.#workflows
        ? {}
        : { workflowsPath: AGENT_WORKFLOWS_PATH }),
    };
  }

  async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    if (!this.#mcp) return next(worker);
    try {
      await this.#mcp.start();
      const sessionQueue = this.#sessionQueue;
      if (!sessionQueue) return await next(worker);
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

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return options.workflowsPath || options.workflowBundle
      ? options
      : { ...options, workflowsPath: AGENT_WORKFLOWS_PATH };
  }
}
