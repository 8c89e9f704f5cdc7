import type { ActivityOptions } from '@temporalio/workflow';
import { fairnessKeyOf } from '../src/contract/fairnessKey.ts';
import type { AgentActivities, ModelRoutingInfo, RouteModelInput } from '../src/contract/protocol.ts';
import type { ConversationSettings } from '../src/contract/settings.ts';
import type { ToolInfo } from '../src/contract/types/tools.ts';
import { meteredActivities } from './actionMeter.ts';

const { defaultModel } = meteredActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "the worker's default model",
});

const { modelRouting } = meteredActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "the worker's models",
});

const { routeModel } = meteredActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "the worker's route picks the model",
});

const { listTools } = meteredActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: 'the tools this worker serves',
});

/**
 * The worker's default model, asked once per run so that model calls are named in the Web UI.
 * A regular activity, not a local one: a local activity's result can be recorded in one workflow
 * task and handled in the next, after an Update accepted there, and replay then handles them in the
 * other order (TMPRL1100).
 */
export async function workerDefaultModel(settings: ConversationSettings): Promise<string | undefined> {
  return settings.model ? undefined : defaultModel();
}

/**
 * The worker's default model and its rate-limited models' task queues (patch `yiem-model-routing`),
 * asked once per run like `workerDefaultModel`, which it replaces.
 */
export function workerModelRouting(): Promise<ModelRoutingInfo> {
  return modelRouting();
}

/** The model the worker's `route` function picks for a call (only asked when the worker has one). */
export function routedModel(input: RouteModelInput): Promise<string> {
  return routeModel(input);
}

/** The tools the worker serves, for the `tools` Update. */
export function workerTools(): Promise<ToolInfo[]> {
  return listTools();
}

/**
 * Where a call to `model` runs: a rate-limited model's own task queue, whose rate the server holds
 * for every worker, shared fairly between conversations (Temporal fairness keys); else the
 * conversation's queue. Every model call of a conversation is scheduled here: the turn's and a
 * compaction's.
 */
export function modelCallQueue(
  routing: ModelRoutingInfo | undefined,
  model: string | undefined,
  conversationId: string,
): Pick<ActivityOptions, 'taskQueue' | 'priority'> {
  const taskQueue = model === undefined ? undefined : routing?.queues[model];
  return taskQueue ? { taskQueue, priority: { fairnessKey: fairnessKeyOf(conversationId) } } : {};
}
