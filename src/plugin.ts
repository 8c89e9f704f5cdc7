import { fileURLToPath } from 'node:url';
import type { ReplayWorkerOptions, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
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

  constructor(dependencies: AgentActivityDependencies, options: { workflows?: boolean } = {}) {
    this.activities = createAgentActivities(dependencies);
    this.#workflows = options.workflows ?? true;
  }

  configureWorker(options: WorkerOptions): WorkerOptions {
    return {
      ...options,
      activities: { ...options.activities, ...this.activities },
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
