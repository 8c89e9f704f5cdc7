import { msToNumber } from '@temporalio/common/lib/time.js';
import { isCancellation, patched } from '@temporalio/workflow';
import { TOOL_BATCH_SUMMARY_CHARS } from '../src/contract/limits.ts';
import { toolCancelledMessage, toolErrorMessage, toolWorkerLostMessage } from '../src/contract/messages.ts';
import type {
  AgentActivities,
  ExecuteToolOutput,
  PreparedToolCall,
  ResolvedToolPolicy,
} from '../src/contract/protocol.ts';
import { truncate } from '../src/contract/truncate.ts';
import type { ToolExecutionMode } from '../src/contract/types/conversation.ts';
import { countRetries, meteredActivities } from './actionMeter.ts';
import { failureMessage, workerLost } from './activityFailure.ts';
import { toolBudget } from './safePoint.ts';
import type { ConversationState } from './state.ts';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;
type CallOutcome = Omit<ExecuteToolOutput, 'events'>;

/**
 * Since this patch the batched calls of one reply (`ActivityTool.batched`) that share a task queue
 * and policy run in one `executeTools` activity. Histories recorded before it, and batches with no
 * two such calls, schedule one activity per call.
 */
export const BATCHED_TOOLS_PATCH = 'yiem-batched-tools';

/**
 * The batch plan: `groups` (`planExecutionGroups`, run one after another) as steps of units that
 * start together, a unit of more than one index being one `executeTools` activity. Sequential mode
 * joins consecutive batched calls of one task queue and policy (any other call between them keeps
 * its place and splits the run); parallel mode joins a group's batched calls by task queue and
 * policy, beside its other calls.
 */
export function joinBatches(
  groups: number[][],
  prepared: readonly PreparedToolCall[],
  mode: ToolExecutionMode,
  recorded: boolean,
): number[][][] {
  const alone = groups.map((group) => group.map((index) => [index]));
  // An eval's conversation answers calls from its record one by one.
  if (recorded) return alone;
  const keyOf = (index: number): string | undefined => {
    const call = prepared[index];
    return call?.kind === 'ready' && call.batched
      ? JSON.stringify([call.taskQueue ?? '', call.policy])
      : undefined;
  };
  const steps =
    mode === 'parallel' ? groups.map((group) => byKey(group, keyOf)) : consecutiveRuns(groups, keyOf);
  const joined = steps.some((step) => step.some((unit) => unit.length > 1));
  return joined && patched(BATCHED_TOOLS_PATCH) ? steps : alone;
}

/** A parallel group's units: its batched calls by key, each other call alone. */
function byKey(group: number[], keyOf: (index: number) => string | undefined): number[][] {
  const units: number[][] = [];
  const batches = new Map<string, number[]>();
  for (const index of group) {
    const key = keyOf(index);
    const batch = key === undefined ? undefined : batches.get(key);
    if (batch) batch.push(index);
    else {
      const unit = [index];
      units.push(unit);
      if (key !== undefined) batches.set(key, unit);
    }
  }
  return units;
}

/** Sequential mode's steps: one unit each, consecutive batched calls of one key together. */
function consecutiveRuns(groups: number[][], keyOf: (index: number) => string | undefined): number[][][] {
  const steps: number[][][] = [];
  let runKey: string | undefined;
  for (const index of groups.flat()) {
    const key = keyOf(index);
    const run = steps.at(-1)?.[0];
    if (key !== undefined && key === runKey && run) run.push(index);
    else steps.push([[index]]);
    runKey = key;
  }
  return steps;
}

/**
 * Runs `calls` (batched, one policy and task queue) in one `executeTools` activity, named in the Web
 * UI after its calls; its events are published as an `executeTool`'s are. Each call gets its result;
 * when the activity is cancelled or fails for good, every call of it gets the same ending.
 */
export async function executeBatched(
  state: ConversationState,
  calls: ReadyCall[],
  ids: { activityId: string; callKeys: string[] },
  concurrent: boolean,
): Promise<CallOutcome[]> {
  const [first] = calls;
  if (!first) return [];
  const { policy } = first;
  const perCall = msToNumber(policy.startToCloseTimeout);
  const { executeTools } = meteredActivities<AgentActivities>({
    activityId: ids.activityId,
    summary: batchSummary(calls, concurrent),
    ...toolActivityOptions(policy, first.taskQueue),
    // Each call has its own timeout inside the activity; the attempt has room for all of them.
    startToCloseTimeout: concurrent ? perCall : perCall * calls.length,
  });
  try {
    const output = await executeTools({
      conversationId: state.conversationId,
      turn: state.turn,
      calls: calls.map(({ toolCallId, toolName, args }, index) => ({
        toolCallId,
        toolName,
        args,
        callKey: ids.callKeys[index] ?? toolCallId,
      })),
      concurrent,
      callTimeout: policy.startToCloseTimeout,
      maximumAttempts: policy.retry.maximumAttempts,
      followed: state.events.followed,
      eventOffset: state.events.offset,
      ...toolBudget(state),
    });
    countRetries(output.events);
    if (output.events) state.events.publishFromResult(output.events);
    return output.results;
  } catch (error) {
    return calls.map((call) => ({ message: batchEnding(call, error), terminate: false }));
  }
}

/** What a call of a batch whose activity was cancelled or failed for good reads. */
function batchEnding(call: ReadyCall, error: unknown) {
  const { toolCallId, toolName, policy } = call;
  if (isCancellation(error)) return toolCancelledMessage(toolCallId, toolName);
  if (workerLost(error))
    return toolWorkerLostMessage(toolCallId, toolName, policy.retry.maximumAttempts, policy.heartbeatTimeout);
  return toolErrorMessage(toolCallId, toolName, `Tool "${toolName}" failed: ${failureMessage(error)}`);
}

/** `3 calls in order: read(path: "a"); read(path: "b"); …`: the batch's row in the Web UI. */
function batchSummary(calls: ReadyCall[], concurrent: boolean): string {
  const how = concurrent ? 'together' : 'in order';
  const line = `${calls.length} calls ${how}: ${calls.map((call) => call.summary).join('; ')}`;
  return truncate(line, TOOL_BATCH_SUMMARY_CHARS);
}

/** The Temporal options of a tool's activity (one call's or a batch's), from its policy and queue. */
export function toolActivityOptions(policy: ResolvedToolPolicy, taskQueue: string | undefined) {
  return {
    startToCloseTimeout: policy.startToCloseTimeout,
    heartbeatTimeout: policy.heartbeatTimeout,
    ...(policy.scheduleToStartTimeout ? { scheduleToStartTimeout: policy.scheduleToStartTimeout } : {}),
    retry: policy.retry,
    ...(taskQueue ? { taskQueue } : {}),
  };
}
