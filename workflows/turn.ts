import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
} from '@temporalio/workflow';
import { toolCancelledMessage, toolErrorMessage } from '../src/messages.ts';
import type { ActivityEvents, AgentActivities, PreparedToolCall } from '../src/protocol.ts';
import { resultText } from '../src/toolResult.ts';
import type {
  AgentToolCall,
  ApprovalOutcome,
  AssistantMessage,
  Message,
  ToolInfo,
  ToolResultMessage,
  TurnResult,
} from '../src/types.ts';
import type { ApprovalRequest } from './approvals.ts';
import type { ConversationSettings } from './settings.ts';
import { planExecutionGroups } from './toolBatch.ts';
import type { ToolRunners } from './toolRunners.ts';

const { prepareToolCalls, defaultModel, listTools } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

const { prepareToolCalls: prepareToolCallsActivity } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: 'PREPARE',
});

const { defaultModel: defaultModelActivity } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: "the worker's default model",
});

const { listTools: listToolsActivity } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
  summary: 'the tools this worker serves',
});

/*
 * Every activity the workflow schedules is a regular one. As a local activity, a result could be
 * recorded in one workflow task and handled in the next, after an Update accepted there; replay then
 * handled them in the other order and failed (TMPRL1100, seen with event-stream followers). The
 * local-activity branches replay the conversations recorded before each change.
 */

function prepareBatch(
  input: Parameters<AgentActivities['prepareToolCalls']>[0],
): Promise<PreparedToolCall[]> {
  return patched('prepare-as-activity') ? prepareToolCallsActivity(input) : prepareToolCalls(input);
}

/** What one turn needs from its conversation. */
export interface TurnContext {
  conversationId: string;
  turn: number;
  settings: ConversationSettings;
  /** The model calls go to when the conversation names none, if known. */
  workerModel: string | undefined;
  /** The transcript; the turn appends to it. */
  messages: Message[];
  /** Moves pending user messages into the transcript (the seed's inputChannel drain). */
  drainPending(): void;
  /** Waits for a person to approve or deny a tool call. */
  requestApproval(request: ApprovalRequest): Promise<ApprovalOutcome>;
  /** Publishes the events an activity handed over with its result (the message's text for `messageText`). */
  publishFromResult(events: ActivityEvents, messageText?: string): void;
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
  for (let modelCalls = 0; ; modelCalls++) {
    if (CancellationScope.current().consideredCancelled) return cancelledTurn(turn);
    context.drainPending();
    if (modelCalls >= settings.maxModelCallsPerTurn) {
      return {
        turn,
        status: 'limitReached',
        reply: '',
        error: `Stopped after ${settings.maxModelCallsPerTurn} model calls in one turn without a final answer. Send another message to let the agent continue.`,
      };
    }
    let assistant: AssistantMessage;
    let prepared: PreparedToolCall[] | undefined;
    const agent = context.runners.activeAgent();
    const model = agent?.model ?? settings.model;
    try {
      const {
        events,
        prepared: preparedInCall,
        ...reply
      } = await callModel({
        conversationId: context.conversationId,
        turn,
        messageCount: messages.length,
        ...(model ? { model } : {}),
        eventsInResult: true,
        prepareToolCalls: true,
        ...(agent ? { agent } : {}),
        ...offeredTools(context),
      });
      if (events) context.publishFromResult(events, reply.content);
      assistant = reply;
      prepared = preparedInCall;
    } catch (error) {
      if (isCancellation(error)) return cancelledTurn(turn);
      return { turn, status: 'failed', reply: '', error: `The model call failed: ${failureMessage(error)}` };
    }
    messages.push(assistant);
    if (assistant.toolCalls.length === 0) return { turn, status: 'completed', reply: assistant.content };

    const batch = await runToolCalls(context, assistant.toolCalls, prepared);
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
 * PREPARE the batch, unless the model call already did, then EXECUTE the ready calls group by group.
 * Results are returned in the order the model asked for them, whatever order they finished in. When
 * the turn is cancelled, every call still gets a result: the ones that did not finish say they were
 * cancelled.
 *
 * Whether PREPARE ran in the model call is read from the recorded result, not decided by this code,
 * so conversations recorded with a separate PREPARE activity replay it, without a patch.
 */
async function runToolCalls(
  context: TurnContext,
  toolCalls: AgentToolCall[],
  preparedInCall: PreparedToolCall[] | undefined,
): Promise<{ results: ToolResultMessage[]; terminate: boolean; cancelled: boolean }> {
  let prepared: PreparedToolCall[];
  try {
    prepared =
      preparedInCall ??
      (await prepareBatch({
        conversationId: context.conversationId,
        turn: context.turn,
        toolCalls,
        ...offeredTools(context),
      }));
  } catch (error) {
    if (!isCancellation(error)) throw error;
    const results = toolCalls.map((call) => toolCancelledMessage(call.id, call.name));
    return { results, terminate: false, cancelled: true };
  }
  const results: (ToolResultMessage | undefined)[] = prepared.map((call) =>
    call.kind === 'immediate' ? call.message : undefined,
  );
  let terminate = false;
  const activityIds = new Set<string>();
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
        terminate ||= outcome.terminate;
      }),
    );
  }
  return {
    results: prepared.map(
      (call, index) =>
        results[index] ??
        (call.kind === 'ready' ? toolCancelledMessage(call.toolCallId, call.toolName) : call.message),
    ),
    terminate,
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
      eventsInResult: true,
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

/** Activity ids derive from the tool call id; a model that repeats an id still gets unique ones. */
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
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(cause);
}

/**
 * The worker's default model, asked once per conversation so that model calls are named in the Web
 * UI. Conversations recorded before this existed replay without asking.
 */
export async function workerDefaultModel(settings: ConversationSettings): Promise<string | undefined> {
  if (settings.model || !patched('yiem-model-name')) return undefined;
  return patched('default-model-as-activity') ? defaultModelActivity() : defaultModel();
}

/** The tools the worker serves, for the `tools` Update. */
export function workerTools(): Promise<ToolInfo[]> {
  return patched('list-tools-as-activity') ? listToolsActivity() : listTools();
}
