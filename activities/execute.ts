import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { toolErrorMessage, toolResultMessage } from '../src/messages.ts';
import type { ExecuteToolInput, ExecuteToolOutput } from '../src/protocol.ts';
import type { ToolRegistry } from '../src/registry.ts';
import { firstLine, resultText, textContent } from '../src/toolResult.ts';
import { limitToolResult } from '../src/toolResultLimit.ts';
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentEvent,
  AgentEventSink,
  AgentHooks,
  AgentToolResult,
} from '../src/types.ts';
import { type ActivityEventPublisher, activityEventPublisher } from './events.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import { messageOf } from './prepare.ts';
import { summarizeToolCall } from './summary.ts';
import { runWithToolCall } from './toolCallContext.ts';

export interface ExecuteDependencies {
  registry: ToolRegistry;
  hooks: AgentHooks;
  emit: AgentEventSink;
  warn: (message: string) => void;
  /** Results larger than this (text or details, UTF-8 bytes) are cut with a note to the model. */
  maxResultBytes: number;
}

/**
 * EXECUTE and FINALIZE of one tool call, as one activity: emit `toolExecutionStart`, run the tool with
 * the activity's cancellation signal, stream partial results as heartbeats and events, then run
 * `afterToolCall`, emit `toolExecutionEnd` and return the result message.
 */
export async function executeTool(
  deps: ExecuteDependencies,
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  const context = Context.current();
  const { attempt } = context.info;
  const { conversationId, toolCallId, toolName, args } = input;
  await deps.registry.refresh();
  const tool = deps.registry.get(toolName);
  if (!tool) {
    return {
      message: toolErrorMessage(
        toolCallId,
        toolName,
        `Tool "${toolName}" is no longer available on this worker`,
      ),
      terminate: false,
    };
  }
  const event = { conversationId, toolCallId, toolName, attempt };
  const published = activityEventPublisher(input.turn, deps.warn, {
    eventsInResult: input.eventsInResult === true,
  });
  deps.emit({ type: 'toolExecutionStart', ...event, args });
  published.publish(
    { type: 'toolStart', toolCallId, toolName, summary: summarizeToolCall(toolName, args) },
    { now: true },
  );

  const onPartialResult = (partialResult: Record<string, unknown>): void => {
    context.heartbeat(partialResult);
    deps.emit({ type: 'toolExecutionUpdate', ...event, partialResult });
    published.publish({ type: 'toolProgress', toolCallId, toolName, partialResult });
  };
  const stopHeartbeats = heartbeatWhileRunning(context);
  let result: AgentToolResult;
  let isError = false;
  try {
    const { workflowExecution, activityId } = context.info;
    const call = {
      conversationId,
      toolCallId,
      toolName,
      attempt,
      idempotencyKey: `${workflowExecution?.workflowId ?? conversationId}/${activityId}`,
    };
    result = normalizeResult(
      await runWithToolCall(call, () =>
        tool.execute(toolCallId, args, context.cancellationSignal, onPartialResult),
      ),
    );
  } catch (error) {
    if (context.cancellationSignal.aborted || !givesUp(error, attempt, input.maximumAttempts)) {
      await published.abandon();
      throw error;
    }
    result = failureResult(toolName, error, attempt);
    isError = true;
  } finally {
    stopHeartbeats();
  }

  const after = await safeAfterToolCall(deps, published, {
    conversationId,
    toolCallId,
    toolName,
    args,
    result,
    isError,
  });
  if (after) {
    const { isError: replacedIsError, ...replaced } = after;
    result = { ...result, ...replaced };
    isError = replacedIsError ?? isError;
  }
  result = limitToolResult(result, deps.maxResultBytes);
  deps.emit({ type: 'toolExecutionEnd', ...event, result, isError });
  published.publish({
    type: 'toolEnd',
    toolCallId,
    toolName,
    isError,
    text: firstLine(resultText(result.content)),
  });
  const message = toolResultMessage(toolCallId, toolName, result, isError);
  const heldBack = await published.finish();
  return { message, terminate: result.terminate, ...(heldBack.length > 0 ? { events: heldBack } : {}) };
}

/** Runs `afterToolCall`, closing the event publisher first when the hook throws. */
async function safeAfterToolCall(
  deps: ExecuteDependencies,
  published: ActivityEventPublisher,
  context: AfterToolCallContext,
): Promise<AfterToolCallResult | undefined> {
  try {
    return await deps.hooks.afterToolCall?.(context);
  } catch (error) {
    await published.abandon();
    throw error;
  }
}

/**
 * A tool error the model should see now: a `ToolError` (matched by name, since tool files may load
 * their own copy of the class), a non-retryable failure, or the last allowed attempt.
 */
function givesUp(error: unknown, attempt: number, maximumAttempts: number): boolean {
  if (error instanceof ApplicationFailure && error.nonRetryable) return true;
  if (error instanceof Error && error.name === 'ToolError') return true;
  return maximumAttempts > 0 && attempt >= maximumAttempts;
}

function failureResult(toolName: string, error: unknown, attempt: number): AgentToolResult {
  const retried = attempt > 1 ? ` (after ${attempt} attempts)` : '';
  return {
    content: [textContent(`Tool "${toolName}" failed${retried}: ${messageOf(error)}`)],
    details: { error: messageOf(error), attempt },
    usage: null,
    terminate: false,
  };
}

/** Tools written by hand may leave out fields; the model and the transcript need all of them. */
function normalizeResult(result: Partial<AgentToolResult> | undefined): AgentToolResult {
  return {
    content: Array.isArray(result?.content) ? result.content : [],
    details: result?.details ?? {},
    usage: result?.usage ?? null,
    terminate: result?.terminate === true,
  };
}

/** Wraps a sink so that a throwing sink never fails a tool call. */
export function safeSink(sink: AgentEventSink | undefined, log: (message: string) => void): AgentEventSink {
  if (!sink) return () => {};
  return (event: AgentEvent) => {
    try {
      sink(event);
    } catch (error) {
      log(`eventSink threw on ${event.type}: ${messageOf(error)}`);
    }
  };
}
