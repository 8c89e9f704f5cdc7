import { fileURLToPath } from 'node:url';
import type { InjectedSinks, ReplayWorkerOptions, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { safeSink } from '../activities/execute.ts';
import { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
import type { AgentEventSinks } from '../workflows/eventSink.ts';
import type { AgentActivities } from './protocol.ts';

/** The module that exports `conversationWorkflow`, for workers that bundle it themselves. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

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
  readonly #sinks: InjectedSinks<AgentEventSinks>;

  constructor(dependencies: AgentActivityDependencies, options: { workflows?: boolean } = {}) {
    this.activities = createAgentActivities(dependencies);
    this.#workflows = options.workflows ?? true;
    // Sub-agent, handoff and callback calls run in the workflow; their events reach the sink too.
    const emit = safeSink(dependencies.eventSink, dependencies.log ?? console.warn);
    this.#sinks = {
      yiemAgentEvents: { emit: { fn: (_info, event) => emit(event), callDuringReplay: false } },
    };
  }

  configureWorker(options: WorkerOptions): WorkerOptions {
    return {
      ...options,
      activities: { ...options.activities, ...this.activities },
      sinks: { ...options.sinks, ...this.#sinks },
      ...(options.workflowsPath || options.workflowBundle || !this.#workflows
        ? {}
        : { workflowsPath: AGENT_WORKFLOWS_PATH }),
    };
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return options.workflowsPath || options.workflowBundle
      ? options
      : { ...options, workflowsPath: AGENT_WORKFLOWS_PATH };
  }
}
