import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { toolCancelledMessage, toolErrorMessage } from '../src/contract/messages.ts';
import type { ActivityEvents, AgentActivities, PreparedToolCall } from '../src/contract/protocol.ts';
import type { ConversationSettings } from '../src/contract/settings.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { resultText } from '../src/contract/toolResult.ts';
import { largeInlineMessages, storedOutline, type TranscriptEntry } from '../src/contract/transcript.ts';
import type {
  ApprovalOutcome,
  AssistantMessage,
  ToolInfo,
  ToolResultMessage,
  TurnResult,
} from '../src/contract/types.ts';
import type { ApprovalRequest } from './approvals.ts';
import { planExecutionGroups } from './toolBatch.ts';
import type { ToolRunners } from './toolRunners.ts';

const { defaultModel } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "the worker's default model",
});

const { listTools } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: 'the tools this worker serves',
});

/** What one turn needs from its conversation. */
export interface TurnContext {
  conversationId: string;
  turn: number;
  settings: ConversationSettings;
  /** The model calls go to when the conversation names none, if known. */
  workerModel: string | undefined;
  /** The transcript; the turn appends to it. */
  messages: TranscriptEntry[];
  /** Moves pending user messages into the transcript (the seed's inputChannel drain). */
  drainPending(): void;
  /** Waits for a person to approve or deny a tool call. */
  requestApproval(request: ApprovalRequest): Promise<ApprovalOutcome>;
  /** Publishes the events an activity handed over with its result (the message's text for `messageText`). */
  publishFromResult(events: ActivityEvents, messageText?: string): void;
  /** Whether anyone follows the event log now (activities then stream their events live). */
  followed(): boolean;
  /** Sub-agents, handoffs and callback tools, and the agent a handoff made active. */
  runners: ToolRunners;
}

/**
 * One turn of the agent loop (the seed's `_process_message`): drain pending messages, call the
 * model, run its tool calls, and repeat until the model answers without tools, a tool terminates the
 * batch, the model call limit is reached, or the model call fails for good.
 */
export async function runTurn(context: TurnContext): Promise<TurnResult> {
  const { turn, settings, messages } = context;
  const callModel = modelActivity(context);
  const activityIds = new Set<string>();
  for (let modelCalls = 0; ; modelCalls++) {
    // The turn owns the messages it was started for, even when it is cancelled before its first
    // model call (during the default-model lookup, say): their prompts get the cancelled result.
    // Messages that arrive during a turn that is then cancelled wait for the next turn.
    const cancelled = CancellationScope.current().consideredCancelled;
    if (cancelled && modelCalls > 0) return cancelledTurn(turn);
    context.drainPending();
    if (cancelled) return cancelledTurn(turn);
    if (modelCalls >= settings.maxModelCallsPerTurn) {
      return {
        turn,
        status: 'limitReached',
        reply: '',
        error: `Stopped after ${settings.maxModelCallsPerTurn} model calls in one turn without a final answer. Send another message to let the agent continue.`,
      };
    }
    let assistant: AssistantMessage;
    let kept: TranscriptEntry;
    let prepared: PreparedToolCall[];
    const agent = context.runners.activeAgent();
    const model = agent?.model ?? settings.model;
    try {
      const storeIndices = largeInlineMessages(messages);
      const {
        events,
        prepared: preparedInCall,
        stored,
        storedMessages,
        ...reply
      } = await callModel({
        conversationId: context.conversationId,
        turn,
        messageCount: messages.length,
        transcriptId: workflowInfo().firstExecutionRunId,
        ...(storeIndices.length > 0 ? { storeIndices } : {}),
        ...(model ? { model } : {}),
        followed: context.followed(),
        ...(agent ? { agent } : {}),
        ...offeredTools(context),
      });
      if (events) context.publishFromResult(events, reply.content);
      for (const { index, stored: reference } of storedMessages ?? []) {
        const message = messages[index];
        if (message) messages[index] = storedOutline(message, reference);
      }
      assistant = reply;
      kept = stored ? storedOutline(reply, stored) : reply;
      prepared = preparedInCall ?? [];
    } catch (error) {
      if (isCancellation(error)) return cancelledTurn(turn);
      return { turn, status: 'failed', reply: '', error: `The model call failed: ${failureMessage(error)}` };
    }
    messages.push(kept);
    if (assistant.toolCalls.length === 0) return finalReply(turn, assistant);

    const batch = await runToolCalls(context, prepared, activityIds);
    messages.push(...batch.results);
    if (batch.cancelled) return cancelledTurn(turn);
    if (batch.terminate) {
      return {
        turn,
        status: 'terminated',
        reply: batch.results.map((result) => resultText(result.content)).join('\n'),
      };
    }
  }
}

/** A reply the model cut off at its output limit is reported, never passed off as a whole answer. */
function finalReply(turn: number, assistant: AssistantMessage): TurnResult {
  if (assistant.stopReason !== 'length') return { turn, status: 'completed', reply: assistant.content };
  if (assistant.content === '') {
    return {
      turn,
      status: 'failed',
      reply: '',
      error:
        'The model reached its output limit before writing any reply (finish_reason "length"). Send another message to try again, or raise the model\'s output token limit.',
    };
  }
  return {
    turn,
    status: 'completed',
    reply: assistant.content,
    error: 'The reply was cut off at the model\'s output token limit (finish_reason "length").',
  };
}

function cancelledTurn(turn: number): TurnResult {
  return { turn, status: 'cancelled', reply: '', error: 'The turn was cancelled.' };
}

function modelActivity(context: TurnContext): AgentActivities['callModel'] {
  const { modelPolicy } = context.settings;
  return (input) => {
    const agent = input.agent ? `agent ${input.agent.name} · ` : '';
    return proxyActivities<AgentActivities>({
      startToCloseTimeout: modelPolicy.startToCloseTimeout ?? '2 minutes',
      ...(modelPolicy.heartbeatTimeout ? { heartbeatTimeout: modelPolicy.heartbeatTimeout } : {}),
      ...(modelPolicy.retry ? { retry: modelPolicy.retry } : {}),
      summary: `${agent}model ${input.model ?? context.workerModel ?? '(worker default)'} · turn ${context.turn}`,
    }).callModel(input);
  };
}

/**
 * EXECUTE the batch the model call PREPAREd, group by group. Results are returned in the order the
 * model asked for them, whatever order they finished in. When the turn is cancelled, every call still
 * gets a result: the ones that did not finish say they were cancelled. The batch terminates the turn
 * only when every call in it asked to (as in the seed and pi-agent-core): a call answered in
 * PREPARE, denied, failed or cancelled did not.
 */
async function runToolCalls(
  context: TurnContext,
  prepared: PreparedToolCall[],
  activityIds: Set<string>,
): Promise<{ results: ToolResultMessage[]; terminate: boolean; cancelled: boolean }> {
  const results: (ToolResultMessage | undefined)[] = prepared.map((call) =>
    call.kind === 'immediate' ? call.message : undefined,
  );
  const terminated: boolean[] = prepared.map(() => false);
  const scope = CancellationScope.current();
  for (const group of planExecutionGroups(prepared, context.settings.toolExecution)) {
    if (scope.consideredCancelled) break;
    await Promise.all(
      group.map(async (index) => {
        const call = prepared[index];
        if (call?.kind !== 'ready') return;
        const outcome = await executeToolCall(
          context,
          call,
          uniqueActivityId(activityIds, context.turn, call.toolCallId),
        );
        results[index] = outcome.message;
        terminated[index] = outcome.terminate;
      }),
    );
  }
  return {
    results: prepared.map(
      (call, index) =>
        results[index] ??
        (call.kind === 'ready' ? toolCancelledMessage(call.toolCallId, call.toolName) : call.message),
    ),
    terminate: terminated.length > 0 && terminated.every(Boolean),
    cancelled: scope.consideredCancelled,
  };
}

async function executeToolCall(
  context: TurnContext,
  call: Extract<PreparedToolCall, { kind: 'ready' }>,
  activityId: string,
): Promise<{ message: ToolResultMessage; terminate: boolean }> {
  if (call.approval) {
    let outcome: ApprovalOutcome;
    try {
      outcome = await context.requestApproval({
        approvalId: activityId,
        turn: context.turn,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        args: call.args,
        reason: call.approval.reason,
      });
    } catch (error) {
      if (isCancellation(error))
        return { message: toolCancelledMessage(call.toolCallId, call.toolName), terminate: false };
      throw error;
    }
    if (!outcome.approved) {
      const why = outcome.reason ? `: ${outcome.reason}` : '';
      const text =
        outcome.decidedBy === 'timeout'
          ? `Tool call "${call.toolName}" was denied: approval timed out (${outcome.reason})`
          : `Tool call "${call.toolName}" was denied by the user${why}`;
      return { message: toolErrorMessage(call.toolCallId, call.toolName, text), terminate: false };
    }
  }
  if (call.runner) return context.runners.run({ ...call, runner: call.runner }, activityId, context.turn);
  const { executeTool } = proxyActivities<AgentActivities>({
    activityId,
    summary: call.summary,
    startToCloseTimeout: call.policy.startToCloseTimeout,
    heartbeatTimeout: call.policy.heartbeatTimeout,
    ...(call.policy.scheduleToStartTimeout
      ? { scheduleToStartTimeout: call.policy.scheduleToStartTimeout }
      : {}),
    retry: call.policy.retry,
    ...(call.taskQueue ? { taskQueue: call.taskQueue } : {}),
  });
  try {
    const { events, ...outcome } = await executeTool({
      conversationId: context.conversationId,
      turn: context.turn,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
      maximumAttempts: call.policy.retry.maximumAttempts,
      followed: context.followed(),
    });
    if (events) context.publishFromResult(events);
    return outcome;
  } catch (error) {
    if (isCancellation(error))
      return { message: toolCancelledMessage(call.toolCallId, call.toolName), terminate: false };
    // The activity failed for good (lost workers, timeouts): the model still gets a result.
    const text = `Tool "${call.toolName}" failed: ${failureMessage(error)}`;
    return { message: toolErrorMessage(call.toolCallId, call.toolName, text), terminate: false };
  }
}

/** The tools the model was offered: the active agent's, else the conversation's (absent: all). */
function offeredTools(context: TurnContext): { tools?: string[] } {
  const agent = context.runners.activeAgent();
  const tools = agent ? (agent.tools ?? []) : context.settings.tools;
  return tools ? { tools } : {};
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

/** The innermost cause's message: what actually went wrong, not the activity wrapper. */
function failureMessage(error: unknown): string {
  let cause: unknown = error;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof TimeoutFailure) return `timed out (${cause.timeoutType})`;
  return describeThrown(cause);
}

/**
 * The worker's default model, asked once per run so that model calls are named in the Web UI.
 * A regular activity, not a local one: a local activity's result can be recorded in one workflow
 * task and handled in the next, after an Update accepted there, and replay then handles them in the
 * other order (TMPRL1100).
 */
export async function workerDefaultModel(settings: ConversationSettings): Promise<string | undefined> {
  return settings.model ? undefined : defaultModel();
}

/** The tools the worker serves, for the `tools` Update. */
export function workerTools(): Promise<ToolInfo[]> {
  return listTools();
}
