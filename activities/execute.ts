import { setImmediate } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import {
  toolErrorMessage,
  toolOutcomeUnknownMessage,
  toolResultMessage,
  workerDeathsText,
} from '../src/contract/messages.ts';
import { type ExecuteToolInput, type ExecuteToolOutput, TOOL_CALL_FAILED } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { textContent, toolEndText } from '../src/contract/toolResult.ts';
import { limitToolResult } from '../src/contract/toolResultLimit.ts';
import type { ToolArguments } from '../src/contract/types/base.ts';
import type { AgentEvent, AgentEventSink } from '../src/contract/types/events.ts';
import type { AgentHooks } from '../src/contract/types/hooks.ts';
import type { ActivityTool, AgentToolResult, InterruptedCallOutcome } from '../src/contract/types/tools.ts';
import { runWithToolCall } from '../src/infrastructure/toolCallContext.ts';
import { cancelledByWorkflow, lastAttempt } from './attempts.ts';
import { type ActivityEventPublisher, activityEventPublisher } from './events.ts';
import { finalize } from './finalize.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import { limitProgress } from './progress.ts';
import type { ToolRegistry } from './registry/registry.ts';
import { summarizeToolCall } from './summary.ts';
import { keepWorkerDeaths, markedDetails, sealedByWorkerDeaths, workerDeathsBefore } from './workerDeaths.ts';

export interface ExecuteDependencies {
  registry: ToolRegistry;
  hooks: AgentHooks;
  emit: AgentEventSink;
  warn: (message: string) => void;
  /** Results larger than this (text or details, UTF-8 bytes) are cut with a note to the model. */
  maxResultBytes: number;
  /** This worker's Temporal identity, for a call it cannot serve. */
  workerIdentity?: string | undefined;
  /** A call whose worker died this many times fails for good, unless its tool's policy says otherwise (0: never). */
  maxWorkerDeaths: number;
}

/**
 * EXECUTE and FINALIZE of one tool call, as one activity (`executeTool`): emit `toolExecutionStart`,
 * run the tool with the activity's cancellation signal, stream partial results as events (the
 * latest riding on the next heartbeat), then FINALIZE (finalize.ts: `afterToolCall`), cap the
 * result's size, emit `toolExecutionEnd` and return the result message. PREPARE ran before, in the model call
 * (prepare.ts); the workflow's tool batch (workflows/toolBatch.ts) schedules this activity.
 */
export async function executeTool(
  deps: ExecuteDependencies,
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  const context = Context.current();
  await deps.registry.refresh();
  const found = activityToolOf(deps, input, context.info.taskQueue);
  if ('refusal' in found) return found.refusal;
  const deaths = await workerDeathsBefore(context, deps.warn);
  const run = startToolCall(deps, input, context, deaths);
  const limit = found.tool.policy?.maxWorkerDeaths ?? deps.maxWorkerDeaths;
  let executed: ExecutedCall;
  if (sealedByWorkerDeaths(deaths, limit)) executed = sealedCall(found.tool, run, input);
  else {
    await keepWorkerDeaths(context, deaths, deps.warn);
    executed = await runTool(found.tool, run, input);
  }
  return finishToolCall(deps, run, input, executed);
}

/** One attempt of a tool call while it runs: its events, its publisher, the latest progress. */
interface ToolCallRun {
  context: Context;
  attempt: number;
  /** How many earlier attempts ended with their worker gone (workerDeaths.ts). */
  workerDeaths: number;
  published: ActivityEventPublisher;
  /** The latest progress rides on the next heartbeat (the Web UI shows it as the activity's details). */
  latestProgress: unknown;
  /** Set when an earlier attempt was interrupted: what became of it, told on `toolExecutionEnd`. */
  outcome: InterruptedCallOutcome | undefined;
  onPartialResult: (reported: Record<string, unknown>) => void;
  end: (
    result: AgentToolResult,
    isError: boolean,
    willRetry: boolean,
    outcome?: InterruptedCallOutcome,
  ) => void;
}

/** What EXECUTE produced, before FINALIZE. */
interface ExecutedCall {
  result: AgentToolResult;
  isError: boolean;
}

/** The tool this activity runs, or the error result the model gets when this worker cannot run it. */
function activityToolOf(
  deps: ExecuteDependencies,
  input: ExecuteToolInput,
  taskQueue: string,
): { tool: ActivityTool } | { refusal: ExecuteToolOutput } {
  const { toolCallId, toolName } = input;
  const tool = deps.registry.get(toolName);
  const worker = deps.workerIdentity ?? '(unknown)';
  if (!tool) {
    const text = `Tool "${toolName}" is not on worker ${worker} (task queue "${taskQueue}"): it was removed, or the worker that prepared the call serves other tools on the same queue.`;
    deps.warn(text);
    return { refusal: { message: toolErrorMessage(toolCallId, toolName, text), terminate: false } };
  }
  if (!tool.execute) {
    // A tool the workflow runs itself gets here only from a worker that registers it differently
    // from the one that PREPAREd the call.
    const text = `Tool "${toolName}" runs in the workflow on worker ${worker}, not in an activity`;
    return { refusal: { message: toolErrorMessage(toolCallId, toolName, text), terminate: false } };
  }
  return { tool };
}

/** Emits the attempt's start and sets up its progress and end events. */
function startToolCall(
  deps: ExecuteDependencies,
  input: ExecuteToolInput,
  context: Context,
  workerDeaths: number,
): ToolCallRun {
  const { attempt } = context.info;
  const { conversationId, toolCallId, toolName, args } = input;
  const event = { conversationId, toolCallId, toolName, attempt };
  const localCallKey = context.info.isLocal ? input.callKey : undefined;
  const published = activityEventPublisher(input.turn, deps.warn, input, localCallKey);
  deps.emit({ type: 'toolExecutionStart', ...event, args });
  published.publish(
    { type: 'toolStart', toolCallId, toolName, summary: summarizeToolCall(toolName, args) },
    { now: true },
  );
  const run: ToolCallRun = {
    context,
    attempt,
    workerDeaths,
    published,
    latestProgress: undefined,
    outcome: undefined,
    onPartialResult: (reported) => {
      const partialResult = limitProgress(reported);
      run.latestProgress = partialResult;
      deps.emit({ type: 'toolExecutionUpdate', ...event, partialResult });
      published.publish({ type: 'toolProgress', toolCallId, toolName, partialResult });
    },
    // Every start gets an end: a failed attempt that will be retried ends with its error and
    // `willRetry`, and the next attempt starts again.
    end: (result, isError, willRetry, outcome) => {
      const told = outcome ? { outcome } : {};
      deps.emit({ type: 'toolExecutionEnd', ...event, result, isError, willRetry, ...told });
      const text = toolEndText(result.content);
      published.publish({ type: 'toolEnd', toolCallId, toolName, isError, willRetry, text, ...told });
    },
  };
  return run;
}

/** EXECUTE, heartbeating meanwhile; throws when the attempt ends without a result for the model. */
async function runTool(tool: ActivityTool, run: ToolCallRun, input: ExecuteToolInput): Promise<ExecutedCall> {
  const stopHeartbeats = heartbeatWhileRunning(run.context, () =>
    markedDetails(run.context, run.workerDeaths, run.latestProgress),
  );
  try {
    return await executeOrReconcile(tool, run, input);
  } catch (error) {
    return await failedAttempt(tool, run, input, error);
  } finally {
    stopHeartbeats();
  }
}

/** Runs the tool; an at-most-once tool's later attempt first asks the tool what became of the earlier one. */
async function executeOrReconcile(
  tool: ActivityTool,
  run: ToolCallRun,
  input: ExecuteToolInput,
): Promise<ExecutedCall> {
  const { context, attempt } = run;
  const { conversationId, toolCallId, toolName, args } = input;
  const { workflowExecution, activityId } = context.info;
  const call = {
    conversationId,
    toolCallId,
    toolName,
    attempt,
    idempotencyKey: `${workflowExecution?.workflowId ?? conversationId}/${input.callKey ?? activityId}`,
    ...(input.remainingBudget ? { remainingBudget: input.remainingBudget } : {}),
  };
  const earlier =
    tool.atMostOnce && attempt > 1
      ? await runWithToolCall(call, () => reconcileInterrupted(tool, call.idempotencyKey, args, attempt))
      : undefined;
  if (earlier === undefined || earlier === 'notDone') {
    if (earlier) run.outcome = 'rerun';
    const result = await runWithToolCall(call, () =>
      tool.execute(toolCallId, args, context.cancellationSignal, run.onPartialResult),
    );
    return { result: normalizeResult(result), isError: false };
  }
  if ('done' in earlier) {
    run.outcome = 'reconciled';
    return { result: normalizeResult(earlier.done), isError: false };
  }
  run.outcome = 'unknown';
  const { content, details } = toolOutcomeUnknownMessage(toolCallId, toolName, earlier.unknown, attempt);
  return { result: { content, details, usage: null, terminate: false }, isError: true };
}

/**
 * The error result of a call given up because its worker died too often: the tool is not run again
 * (an at-most-once tool's earlier attempts may have taken effect, so its outcome is unknown).
 */
function sealedCall(tool: ActivityTool, run: ToolCallRun, input: ExecuteToolInput): ExecutedCall {
  const { toolCallId, toolName } = input;
  const { attempt, workerDeaths } = run;
  const why = workerDeathsText('this tool', workerDeaths);
  if (tool.atMostOnce) {
    run.outcome = 'unknown';
    const { content, details } = toolOutcomeUnknownMessage(toolCallId, toolName, why, attempt);
    const result = { content, details: { ...details, workerDeaths }, usage: null, terminate: false };
    return { result, isError: true };
  }
  const content = [textContent(`Tool "${toolName}" failed: ${why}.`)];
  return {
    result: { content, details: { workerDeaths, attempt }, usage: null, terminate: false },
    isError: true,
  };
}

/**
 * A tool that threw: its error result for the model when the call gives up, else the attempt ends
 * (its events told, its publisher stopped) and the error is rethrown for Temporal to retry or cancel.
 */
async function failedAttempt(
  tool: ActivityTool,
  run: ToolCallRun,
  input: ExecuteToolInput,
  error: unknown,
): Promise<ExecutedCall> {
  const { context, attempt } = run;
  const { toolName, maximumAttempts } = input;
  const { aborted, reason } = context.cancellationSignal;
  // An at-most-once tool that threw has ended its call: running it again could take effect twice.
  if (!aborted && (tool.atMostOnce || givesUp(error, attempt, maximumAttempts))) {
    return { result: failureResult(toolName, error, attempt), isError: true };
  }
  // Aborted: the turn was cancelled (no retry), or the attempt timed out or its worker is
  // shutting down (retried while attempts remain).
  const why = aborted
    ? `Tool "${toolName}" was stopped (${describeThrown(reason)}): ${describeThrown(error)}`
    : undefined;
  const cancelled = cancelledByWorkflow(context);
  const willRetry = aborted ? !cancelled && !lastAttempt(attempt, maximumAttempts) : true;
  run.end(failureResult(toolName, error, attempt, why), true, willRetry);
  await run.published.abandon({ retrying: willRetry });
  // Whatever the tool threw on abort, the workflow cancelled the call: report it as cancelled,
  // so that its row in the Web UI says so.
  throw cancelled ?? error;
}

/** FINALIZE (`afterToolCall`), the size cap, the end events and the result message. */
async function finishToolCall(
  deps: ExecuteDependencies,
  run: ToolCallRun,
  input: ExecuteToolInput,
  executed: ExecutedCall,
): Promise<ExecuteToolOutput> {
  const { conversationId, toolCallId, toolName, args } = input;
  try {
    const after = await finalize(deps.hooks, { conversationId, toolCallId, toolName, args, ...executed });
    const result = limitToolResult(after.result, deps.maxResultBytes);
    // Cutting a result of megabytes takes tens of milliseconds; let other conversations' work run
    // before the cut result is measured and stored.
    if (result !== after.result) await setImmediate();
    run.end(result, after.isError, false, run.outcome);
    const message = toolResultMessage(toolCallId, toolName, result, after.isError);
    const heldBack = await run.published.finish();
    return { message, terminate: result.terminate, ...(heldBack.length > 0 ? { events: heldBack } : {}) };
  } catch (error) {
    // FINALIZE failed: the attempt's events still reach followers, and its publisher stops.
    await run.published.abandon({ retrying: !lastAttempt(run.attempt, input.maximumAttempts) });
    throw error;
  }
}

/**
 * Asks an at-most-once tool about its call on a later attempt. Temporal starts attempt n > 1 only
 * when attempt n-1 started and never reported its end (its worker died, it timed out, its worker
 * shut down; an at-most-once tool's thrown error ends the call), and records each completion, so
 * `attempt > 1` is the durable record that an earlier attempt may have taken effect. It errs on the
 * safe side: an attempt whose worker died before calling `execute` also counts. Never throws.
 */
async function reconcileInterrupted(
  tool: ActivityTool,
  idempotencyKey: string,
  args: ToolArguments,
  attempt: number,
): Promise<{ done: AgentToolResult } | 'notDone' | { unknown: string }> {
  const interrupted = `attempt ${attempt - 1} was interrupted (its worker was lost, it timed out or it was stopped)`;
  if (!tool.reconcile) return { unknown: `${interrupted} and the tool has no reconcile()` };
  let answer: unknown;
  try {
    answer = await tool.reconcile(idempotencyKey, args);
  } catch (error) {
    return { unknown: `${interrupted} and its reconcile() failed: ${describeThrown(error)}` };
  }
  if (answer === 'notDone') return 'notDone';
  if (answer === 'unknown') return { unknown: `${interrupted} and its reconcile() could not tell` };
  const done = (answer as { done?: unknown } | null)?.done;
  if (typeof done === 'object' && done !== null) return { done: done as AgentToolResult };
  return {
    unknown: `${interrupted} and its reconcile() answered ${describeThrown(answer)}, not { done: result }, 'notDone' or 'unknown'`,
  };
}

/**
 * How the `executeTool` activity ends, as the Web UI shows it: a call whose result is an error (a
 * `ToolError`, a non-retryable failure, the last attempt, an `afterToolCall` that made it one) fails
 * the activity, without retries, with the whole output as the failure's details; the workflow reads
 * it back from there (workflows/toolBatch.ts) and the model gets the same error result. Any other
 * result completes it.
 */
export function endToolActivity(output: ExecuteToolOutput): ExecuteToolOutput {
  if (!output.message.isError) return output;
  // Benign: an expected outcome the model handles, so the worker logs it at debug level, not as a warning.
  throw ApplicationFailure.create({
    message: toolEndText(output.message.content),
    type: TOOL_CALL_FAILED,
    nonRetryable: true,
    details: [output],
    category: ApplicationFailureCategory.BENIGN,
  });
}

/**
 * A tool error the model should see now: a `ToolError` (matched by name, since tool files may load
 * their own copy of the class), a package that cannot load in this process, a non-retryable failure,
 * or the last allowed attempt.
 */
function givesUp(error: unknown, attempt: number, maximumAttempts: number): boolean {
  if (error instanceof ApplicationFailure && error.nonRetryable) return true;
  if (error instanceof Error && FINAL_ERROR_NAMES.has(error.name)) return true;
  return lastAttempt(attempt, maximumAttempts);
}

/** Errors no retry can mend, by name: tool files may load their own copies of the classes. */
const FINAL_ERROR_NAMES = new Set(['ToolError', 'OptionalDependencyError']);

function failureResult(toolName: string, error: unknown, attempt: number, text?: string): AgentToolResult {
  const retried = attempt > 1 ? ` (after ${attempt} attempts)` : '';
  return {
    content: [textContent(text ?? `Tool "${toolName}" failed${retried}: ${describeThrown(error)}`)],
    details: { ...detailsOf(error), error: describeThrown(error), attempt },
    usage: null,
    terminate: false,
  };
}

/** A `ToolError`'s details (read by shape: tool files may load their own copy of the class). */
function detailsOf(error: unknown): Record<string, unknown> {
  const details = (error as { details?: unknown } | null)?.details;
  return typeof details === 'object' && details !== null ? (details as Record<string, unknown>) : {};
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
      log(`eventSink threw on ${event.type}: ${describeThrown(error)}`);
    }
  };
}
