import { ApplicationFailure, CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import {
  isCancelledResult,
  toolCancelledMessage,
  toolErrorMessage,
  toolInterruptedMessage,
  toolOutcomeUnknownMessage,
  toolResultMessage,
  toolWorkerLostMessage,
} from '../src/contract/messages.ts';
import {
  type AgentActivities,
  type ExecuteToolOutput,
  type PreparedToolCall,
  TOOL_CALL_FAILED,
} from '../src/contract/protocol.ts';
import { textContent, toolEndText } from '../src/contract/toolResult.ts';
import type { AgentDefinition } from '../src/contract/types/agents.ts';
import type { ApprovalOutcome } from '../src/contract/types/approvals.ts';
import type { ToolExecutionMode } from '../src/contract/types/conversation.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import type { InterruptedCallOutcome, ToolRunner } from '../src/contract/types/tools.ts';
import { countRetries, meteredActivities, meteredLocalActivities } from './actionMeter.ts';
import { activityFailureCause, failureMessage, workerLost } from './activityFailure.ts';
import type { ApprovalRequest } from './approvals.ts';
import { executeBatched, joinBatches, toolActivityOptions } from './batchedCalls.ts';
import { showCurrentDetails } from './currentDetails.ts';
import { interruptToolBatch, interruptWaiting } from './delivery.ts';
import { emitAgentEvent } from './eventSink.ts';
import { keptNexusResult, runNexusOperation } from './nexusTools.ts';
import { answerFromRecord } from './recordedTools.ts';
import { toolBudget } from './safePoint.ts';
import type { ConversationState } from './state.ts';
import { runSubAgent, type SubAgentStarted } from './subAgents.ts';
import { markCall } from './webUiRows.ts';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;

/** What a batch of tool calls gives the turn. */
export interface BatchOutcome {
  /** One result per call, in the order the model asked for them. */
  results: ToolResultMessage[];
  /** Every call asked to end the turn. */
  terminate: boolean;
  /** The turn was cancelled while the batch ran. */
  cancelled: boolean;
  /** How many calls a message sent with delivery `'interrupt'` cut short (their results say so). */
  interruptedCalls: number;
}

interface ToolOutcome {
  message: ToolResultMessage;
  terminate: boolean;
}

/**
 * EXECUTE the batch the model call PREPAREd (activities/prepare.ts), group by group
 * (`planExecutionGroups`). Each call passes the approval gate, then runs where its tool says: an
 * ordinary tool in an `executeTool` activity (activities/execute.ts, which also runs FINALIZE), an
 * agent tool as a child conversation, a handoff in the workflow, a callback tool on an attached
 * client, a Nexus tool as a Nexus operation (workflows/nexusTools.ts). Results are returned in the order the model asked for them, whatever order they finished
 * in. When the turn is cancelled, every call still gets a result: the ones that did not finish say
 * they were cancelled. The batch terminates the turn only when every call in it asked to (as in the
 * seed and pi-agent-core): a call answered in PREPARE, denied, failed or cancelled did not. A
 * message sent with delivery `'interrupt'` cancels the batch's own scope (not the turn's): the
 * calls that did not finish say they were interrupted by a new message, and the turn goes on.
 *
 * Events: an `executeTool` activity publishes its attempts' `toolStart`/`toolProgress`/`toolEnd`
 * itself (live, or handed back with its result and published here); for the calls the workflow runs,
 * this module publishes `toolStart` and `toolEnd` and hands `toolExecutionStart`/`toolExecutionEnd`
 * to the worker's event sink.
 */
export async function runToolBatch(
  state: ConversationState,
  prepared: PreparedToolCall[],
  activityIds: Set<string>,
): Promise<BatchOutcome> {
  const results: (ToolResultMessage | undefined)[] = prepared.map((call) =>
    call.kind === 'immediate' ? call.message : undefined,
  );
  for (const call of prepared) {
    if (call.kind === 'immediate')
      markCall(`blocked: ${call.message.toolName} — ${toolEndText(call.message.content)}`);
  }
  const terminated: boolean[] = prepared.map(() => false);
  const turnScope = CancellationScope.current();
  const batch = {
    scope: new CancellationScope(),
    interrupted: false,
    answeredInPrepare: prepared.flatMap((call) =>
      call.kind === 'immediate' ? [call.message.toolCallId] : [],
    ),
  };
  state.toolBatch = batch;
  // An interrupt that came while the model was called: the calls it asked for do not start.
  if (interruptWaiting(state)) interruptToolBatch(state);
  try {
    await batch.scope.run(async () => {
      const mode = state.settings.toolExecution;
      const groups = planExecutionGroups(prepared, mode);
      for (const step of joinBatches(groups, prepared, mode, state.settings.recordedTools !== undefined)) {
        if (batch.scope.consideredCancelled) break;
        await Promise.all(
          step.map(async (unit) => {
            const outcomes = await runUnit(state, prepared, unit, activityIds, mode === 'parallel');
            unit.forEach((index, at) => {
              const outcome = outcomes[at];
              if (!outcome) return;
              results[index] = outcome.message;
              terminated[index] = outcome.terminate;
            });
          }),
        );
      }
    });
  } finally {
    state.toolBatch = undefined;
  }
  const interrupted = batch.interrupted && !turnScope.consideredCancelled;
  let interruptedCalls = 0;
  const settled = prepared.map((call, index) => {
    if (call.kind !== 'ready') return call.message;
    const result = results[index] ?? toolCancelledMessage(call.toolCallId, call.toolName);
    if (!interrupted || !isCancelledResult(result)) return result;
    interruptedCalls += 1;
    terminated[index] = false;
    return toolInterruptedMessage(call.toolCallId, call.toolName);
  });
  return {
    results: settled,
    terminate: terminated.length > 0 && terminated.every(Boolean),
    cancelled: turnScope.consideredCancelled,
    interruptedCalls,
  };
}

/**
 * Which prepared calls start together. Each group is a list of indices into the batch; groups run one
 * after another. Sequential mode runs every call alone; parallel mode starts consecutive parallel
 * tools together, and a tool with `parallelToolExecute: false` runs alone in its place.
 * Calls answered in PREPARE need no execution and belong to no group.
 */
export function planExecutionGroups(
  prepared: readonly PreparedToolCall[],
  mode: ToolExecutionMode,
): number[][] {
  const groups: number[][] = [];
  let concurrent: number[] = [];
  const closeConcurrent = (): void => {
    if (concurrent.length > 0) groups.push(concurrent);
    concurrent = [];
  };
  prepared.forEach((call, index) => {
    if (call.kind !== 'ready') return;
    if (mode === 'parallel' && call.parallel) {
      concurrent.push(index);
      return;
    }
    closeConcurrent();
    groups.push([index]);
  });
  closeConcurrent();
  return groups;
}

/**
 * One unit of the plan (`joinBatches`): a call alone, or the batched calls of one `executeTools`
 * activity. One outcome per index of `unit`, none for a call answered in PREPARE.
 */
async function runUnit(
  state: ConversationState,
  prepared: readonly PreparedToolCall[],
  unit: number[],
  activityIds: Set<string>,
  concurrent: boolean,
): Promise<(ToolOutcome | undefined)[]> {
  const calls = unit
    .map((index) => prepared[index])
    .filter((call): call is ReadyCall => call?.kind === 'ready');
  const keyOf = (call: ReadyCall) => uniqueActivityId(activityIds, state.turn, call.toolCallId);
  if (calls.length !== unit.length || calls.length === 1) {
    const call = calls.length === unit.length ? calls[0] : undefined;
    return call ? [await runToolCall(state, call, keyOf(call))] : [];
  }
  const callKeys = calls.map(keyOf);
  const [first] = calls;
  const activityId = uniqueActivityId(activityIds, state.turn, `batch-${first?.toolCallId ?? ''}`);
  return executeBatched(state, calls, { activityId, callKeys }, concurrent);
}

/** One call: the approval gate, then where it runs. `callKey` is its activity id (and approval id). */
async function runToolCall(state: ConversationState, call: ReadyCall, callKey: string): Promise<ToolOutcome> {
  const answered = answerFromRecord(state, call);
  if (answered) return { message: answered, terminate: false };
  const refused = await approvalGate(state, call, callKey);
  if (refused) return { message: refused, terminate: false };
  if (!call.runner) return executeInActivity(state, call, callKey);
  return { message: await runInWorkflow(state, call, call.runner, callKey), terminate: false };
}

/**
 * A call that needs approval waits for a person (or the timeout policy). Returns the result of a
 * call that must not run, denied or cancelled while waiting; nothing for a call that may run.
 */
async function approvalGate(
  state: ConversationState,
  call: ReadyCall,
  approvalId: string,
): Promise<ToolResultMessage | undefined> {
  if (!call.approval) return undefined;
  let outcome: ApprovalOutcome;
  try {
    outcome = await requestApproval(
      state,
      {
        approvalId,
        turn: state.turn,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        args: call.args,
        reason: call.approval.reason,
      },
      call.summary,
    );
  } catch (error) {
    if (isCancellation(error)) return toolCancelledMessage(call.toolCallId, call.toolName);
    throw error;
  }
  if (outcome.approved) return undefined;
  const why = outcome.reason ? `: ${outcome.reason}` : '';
  const timedOut = `approval timed out (${outcome.reason})`;
  const text =
    outcome.decidedBy === 'timeout'
      ? `Tool call "${call.toolName}" was denied: ${timedOut}`
      : `Tool call "${call.toolName}" was denied by the user${why}`;
  markCall(
    `denied: ${call.summary} — ${outcome.decidedBy === 'timeout' ? timedOut : (outcome.reason ?? 'by the user')}`,
  );
  return toolErrorMessage(call.toolCallId, call.toolName, text);
}

/**
 * Since this patch a sub-agent's approval shows on its parent too: `awaitingApproval` while any waits,
 * the parent's own or a sub-agent's, and `running` only once none does.
 */
export const SUB_AGENT_APPROVAL_STATUS_PATCH = 'yiem-sub-agent-approval-status';

/**
 * A sub-agent's approval was asked or settled (`ForwardedApprovals`): the running turn's
 * `YiemStatus` says whether any approval waits.
 */
export function showForwardedApprovals(state: ConversationState): void {
  if (!state.running || !patched(SUB_AGENT_APPROVAL_STATUS_PATCH)) return;
  state.updateSearchAttributes(approvalWaits(state) ? 'awaitingApproval' : 'running', state.turn);
}

/** Whether an approval of the running turn waits: its own, or (since the patch) a sub-agent's. */
function approvalWaits(state: ConversationState): boolean {
  return (
    state.approvals.list().length > 0 ||
    (state.forwarded.list().length > 0 && patched(SUB_AGENT_APPROVAL_STATUS_PATCH))
  );
}

/** Waits for the decision, shown as `awaitingApproval` in search attributes and told to a parent. */
async function requestApproval(
  state: ConversationState,
  request: ApprovalRequest,
  summary: string,
): Promise<ApprovalOutcome> {
  const { approvals, parentLink, turn } = state;
  state.updateSearchAttributes('awaitingApproval', turn);
  const waiting = approvals.request(request, summary);
  showCurrentDetails(state);
  const asked = approvals.list().find((approval) => approval.approvalId === request.approvalId);
  if (asked) parentLink?.requested(asked);
  try {
    const outcome = await waiting;
    parentLink?.resolved(outcome);
    if (!approvalWaits(state)) state.updateSearchAttributes('running', turn);
    return outcome;
  } finally {
    showCurrentDetails(state);
  }
}

/** Since this patch a tool declared `localActivity` runs its calls as local activities. */
export const LOCAL_TOOL_CALLS_PATCH = 'yiem-local-tool-calls';

/**
 * An ordinary tool: EXECUTE and FINALIZE in an `executeTool` activity, with the tool's own policy; a
 * `localActivity` tool's in a local activity, which has no heartbeat, task queue or ID of its own.
 */
async function executeInActivity(
  state: ConversationState,
  call: ReadyCall,
  activityId: string,
): Promise<ToolOutcome> {
  const local = call.localActivity === true && patched(LOCAL_TOOL_CALLS_PATCH);
  const { summary, policy } = call;
  const { executeTool } = local
    ? meteredLocalActivities<AgentActivities>({
        summary,
        startToCloseTimeout: policy.startToCloseTimeout,
        retry: policy.retry,
      })
    : meteredActivities<AgentActivities>({
        activityId,
        summary,
        ...toolActivityOptions(policy, call.taskQueue),
      });
  try {
    const executed = await executeTool({
      conversationId: state.conversationId,
      turn: state.turn,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
      maximumAttempts: policy.retry.maximumAttempts,
      followed: state.events.followed,
      eventOffset: state.events.offset,
      ...toolBudget(state),
      ...(local ? { callKey: activityId } : {}),
    });
    if (!local) countRetries(executed.events);
    const { events, ...outcome } = executed;
    if (events) state.events.publishFromResult(events, { toolResult: outcome.message.content });
    return outcome;
  } catch (error) {
    const reported = reportedToolOutput(error);
    if (reported) {
      const { events, ...outcome } = reported;
      if (!local) countRetries(events);
      if (events) state.events.publishFromResult(events, { toolResult: outcome.message.content });
      if (givenUpForWorkerDeaths(outcome.message))
        state.turnGivenUp.push(toolEndText(outcome.message.content));
      return outcome;
    }
    if (isCancellation(error))
      return { message: toolCancelledMessage(call.toolCallId, call.toolName), terminate: false };
    // The activity failed for good (lost workers, timeouts): the model still gets a result. An
    // at-most-once call's attempts were interrupted, so whether it took effect is unknown.
    if (call.atMostOnce) {
      const why = `its activity failed for good: ${failureMessage(error)}`;
      const message = toolOutcomeUnknownMessage(call.toolCallId, call.toolName, why);
      publishToolEnd(state, message, 'unknown');
      return { message, terminate: false };
    }
    if (workerLost(error) && patched(WORKER_LOST_PATCH)) {
      const { maximumAttempts } = policy.retry;
      const message = toolWorkerLostMessage(
        call.toolCallId,
        call.toolName,
        maximumAttempts,
        policy.heartbeatTimeout,
      );
      return { message, terminate: false };
    }
    const text = `Tool "${call.toolName}" failed: ${failureMessage(error)}`;
    return { message: toolErrorMessage(call.toolCallId, call.toolName, text), terminate: false };
  }
}

/**
 * Since this patch a call whose attempts ran out on a lost worker (its last one missed its heartbeat
 * timeout) says so in words; before it the model read `failed: timed out (TIMEOUT_TYPE_HEARTBEAT)`.
 */
const WORKER_LOST_PATCH = 'yiem-tool-worker-lost';

/**
 * Since this patch the output of a `localActivity` tool's call whose result is an error is read as
 * an activity's is; before it, its failure (which arrives unwrapped) became a second error text.
 */
const LOCAL_TOOL_ERROR_RESULT_PATCH = 'yiem-local-tool-error-result';

/** A result saying its call was given up because its worker died too often (activities/execute.ts). */
function givenUpForWorkerDeaths(message: ToolResultMessage): boolean {
  return typeof (message.details as { workerDeaths?: unknown } | undefined)?.workerDeaths === 'number';
}

/** The output of a call whose result is an error, which its activity reports as a failure. */
function reportedToolOutput(error: unknown): ExecuteToolOutput | undefined {
  const failure = activityFailureCause(error);
  if (!(failure instanceof ApplicationFailure) || failure.type !== TOOL_CALL_FAILED) return undefined;
  if (failure === error && !patched(LOCAL_TOOL_ERROR_RESULT_PATCH)) return undefined;
  return failure.details?.[0] as ExecuteToolOutput | undefined;
}

/** A tool with a `runner`: the workflow runs the call itself, and publishes its events. */
async function runInWorkflow(
  state: ConversationState,
  call: ReadyCall,
  runner: ToolRunner,
  callKey: string,
): Promise<ToolResultMessage> {
  const { toolCallId, toolName, args } = call;
  const event = { conversationId: state.conversationId, toolCallId, toolName, attempt: 1 };
  emitAgentEvent({ type: 'toolExecutionStart', ...event, args });
  let message: ToolResultMessage;
  switch (runner.kind) {
    case 'subAgent':
      // Announced once the child exists, so that a client can follow it at once.
      message = await runSubAgent(state, call, runner.agent, callKey, state.turn, (subAgent) =>
        publishToolStart(state, call, subAgent),
      );
      break;
    case 'handoff':
      publishToolStart(state, call);
      message = handOff(state, call, runner.agent);
      break;
    case 'callback':
      publishToolStart(state, call);
      message = await whileShown(state, state.callbacks.run(call, runner, callKey, state.turn));
      break;
    case 'nexus':
      publishToolStart(state, call);
      message = await runNexusOperation(call, runner);
      break;
  }
  publishToolEnd(state, message);
  const { content, details, isError } = message;
  const result = { content, details, usage: null, terminate: false };
  emitAgentEvent({ type: 'toolExecutionEnd', ...event, result, isError, willRetry: false });
  // A large Nexus output arrived in the workflow: the transcript keeps it as an activity's result.
  return runner.kind === 'nexus' ? keptNexusResult(state.conversationId, state.turn, message) : message;
}

/** Keeps the Current Details up to date while `waiting` (a call that waits for someone) runs. */
async function whileShown<T>(state: ConversationState, waiting: Promise<T>): Promise<T> {
  showCurrentDetails(state);
  try {
    return await waiting;
  } finally {
    showCurrentDetails(state);
  }
}

/** From the next model call on, the conversation speaks as `agent`. */
function handOff(state: ConversationState, call: ReadyCall, agent: AgentDefinition): ToolResultMessage {
  const from = state.agent?.name ?? null;
  state.agent = agent;
  state.events.publish(state.turn, { type: 'handoff', from, to: agent.name });
  return toolResultMessage(
    call.toolCallId,
    call.toolName,
    {
      content: [textContent(`Transferred to ${agent.name}; you are now ${agent.name}.`)],
      details: { agent: agent.name },
    },
    false,
  );
}

function publishToolStart(state: ConversationState, call: ReadyCall, subAgent?: SubAgentStarted): void {
  const { toolCallId, toolName, summary } = call;
  state.events.publish(state.turn, {
    type: 'toolStart',
    toolCallId,
    toolName,
    summary,
    ...(subAgent ? { subAgent } : {}),
  });
}

function publishToolEnd(
  state: ConversationState,
  message: ToolResultMessage,
  outcome?: InterruptedCallOutcome,
): void {
  state.events.publish(state.turn, {
    type: 'toolEnd',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    isError: message.isError,
    willRetry: false,
    text: toolEndText(message.content),
    ...(outcome ? { outcome } : {}),
  });
}

/**
 * Activity ids derive from the tool call id and are unique in the turn, so unique in the
 * conversation: a model that repeats an id still gets distinct calls, and the approval of a call is
 * named by its activity id.
 */
function uniqueActivityId(taken: Set<string>, turn: number, toolCallId: string): string {
  const base = `tool-${turn}-${toolCallId}`;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}
