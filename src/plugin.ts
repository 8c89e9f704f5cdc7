import { fileURLToPath } from 'node:url';
import { SimplePlugin } from '@temporalio/plugin';
import type { ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
import type { AgentActivities } from './protocol.ts';

/** `.ts` when running from the sources, `.js` from the built package. */
const MODULE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The module that exports `conversationWorkflow`, for workers that bundle it themselves. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(
  new URL(`../workflows/index${MODULE_EXTENSION}`, import.meta.url),
);

/**
 * Adds yiem's activities (model call, PREPARE, EXECUTE) to any Temporal worker, and its workflows
 * when the worker brings none of its own. A worker with its own workflows module should re-export
 * `conversationWorkflow` from it. With `workflows: false` it adds only the activities, for a worker
 * on a tool's dedicated task queue. Model calls read their context through the worker's own client.
 */
export class AgentPlugin extends SimplePlugin {
  readonly activities: AgentActivities;

  constructor(dependencies: AgentActivityDependencies, options: { workflows?: boolean } = {}) {
    const activities = createAgentActivities(dependencies);
    super({
      name: 'yiem-agent',
      activities,
      ...(options.workflows === false
        ? {}
        : { workflowsPath: (ownPath: string | undefined) => ownPath ?? AGENT_WORKFLOWS_PATH }),
    });
    this.activities = activities;
  }

  // A prebuilt bundle brings the worker's workflows: no path goes beside it.
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    return options.workflowBundle ? { ...configured, workflowsPath: options.workflowsPath } : configured;
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    return options.workflowBundle ? { ...configured, workflowsPath: options.workflowsPath } : configured;
  }
}
