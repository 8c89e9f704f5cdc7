import { fileURLToPath } from 'node:url';
import type { ReplayWorkerOptions, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
import type { AgentActivities } from './protocol.ts';

/** The module that exports `conversationWorkflow`, for workers that bundle it themselves. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * Adds yiem's activities (model call, PREPARE, EXECUTE) to any Temporal worker, and its workflows
 * when the worker brings none of its own. A worker with its own workflows module should re-export
 * `conversationWorkflow` from it.
 */
export class AgentPlugin implements WorkerPlugin {
  readonly name = 'yiem-agent';
  readonly activities: AgentActivities;

  constructor(dependencies: AgentActivityDependencies) {
    this.activities = createAgentActivities(dependencies);
  }

  configureWorker(options: WorkerOptions): WorkerOptions {
    return {
      ...options,
      activities: { ...options.activities, ...this.activities },
      ...(options.workflowsPath || options.workflowBundle ? {} : { workflowsPath: AGENT_WORKFLOWS_PATH }),
    };
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return options.workflowsPath || options.workflowBundle
      ? options
      : { ...options, workflowsPath: AGENT_WORKFLOWS_PATH };
  }
}
