import { Context } from '@temporalio/activity';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type {
  ExecuteToolInput,
  ExecuteToolOutput,
  ExecuteToolsInput,
  ExecuteToolsOutput,
  ToolBatchCheckpoint,
} from '../src/contract/protocol.ts';
import { toolEndText } from '../src/contract/toolResult.ts';
import { cancelledByWorkflow, lastAttempt } from './attempts.ts';
import { type ActivityEventPublisher, activityEventPublisher } from './events.ts';
import type { SharedAttempt } from './execute.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import { summarizeToolCall } from './summary.ts';

type CallOutput = ToolBatchCheckpoint['done'][number]['output'];

export interface ExecuteBatchDependencies {
  /** Makes sure the registry is current before the first call. */
  refresh: () => Promise<void>;
  warn: (message: string) => void;
  /** One call: EXECUTE and FINALIZE, its span, a large result kept by reference (index.ts). */
  runCall: (input: ExecuteToolInput, shared: SharedAttempt) => Promise<ExecuteToolOutput>;
}

/**
 * The `executeTools` activity: the batched calls of one model reply (workflows/toolBatch.ts), one
 * after another or concurrently, each with the PREPAREd arguments, EXECUTE, FINALIZE and the events
 * `executeTool` gives it, and its own timeout and abort signal. After each finished call the attempt
 * heartbeats its checkpoint (`ToolBatchCheckpoint`): a retried attempt (a thrown error, a timeout, a
 * lost worker) takes the calls the last checkpoint that reached the server names as done, tells
 * their start and end again, and runs the others. A call that throws a retryable error fails the
 * attempt once its concurrent siblings have ended, so Temporal retries the batch from there.
 */
export async function executeTools(
  deps: ExecuteBatchDependencies,
  input: ExecuteToolsInput,
): Promise<ExecuteToolsOutput> {
  const context = Context.current();
  await deps.refresh();
  const checkpoint = resumedCheckpoint(context, input);
  const published = activityEventPublisher(input.turn, deps.warn, input);
  for (const { toolCallId, output } of checkpoint.done) tellResumed(published, input, toolCallId, output);
  const stopHeartbeats = heartbeatWhileRunning(context, () => checkpoint);
  const done = new Set(checkpoint.done.map((entry) => entry.index));
  const pending = input.calls.map((_call, index) => index).filter((index) => !done.has(index));
  const runOne = async (index: number): Promise<void> => {
    const output = await runBatchedCall(deps, input, index, published, checkpoint);
    const { events: _carriedByTheBatch, ...result } = output;
    checkpoint.done.push({ index, toolCallId: result.message.toolCallId, output: result });
    context.heartbeat(checkpoint);
  };
  let failure: unknown;
  try {
    failure = input.concurrent ? await firstFailure(pending.map(runOne)) : await inOrder(pending, runOne);
  } finally {
    stopHeartbeats();
  }
  if (failure !== undefined) {
    await published.abandon({ retrying: !lastAttempt(context.info.attempt, input.maximumAttempts) });
    throw cancelledByWorkflow(context) ?? failure;
  }
  const events = await published.finish();
  const byIndex = new Map(checkpoint.done.map((entry) => [entry.index, entry.output]));
  const results = input.calls.map((_call, index) => byIndex.get(index) as CallOutput);
  return { results, ...(events.length > 0 ? { events } : {}) };
}

/** The calls an earlier attempt checkpointed (none on the first attempt). */
function resumedCheckpoint(context: Context, input: ExecuteToolsInput): ToolBatchCheckpoint {
  const earlier = context.info.heartbeatDetails as ToolBatchCheckpoint | undefined;
  const done = (earlier?.done ?? []).filter(
    (entry) => input.calls[entry.index]?.toolCallId === entry.toolCallId,
  );
  return { done: [...done] };
}

/** A call an earlier attempt finished: its start and end again, so followers of this attempt see it. */
function tellResumed(
  published: ActivityEventPublisher,
  input: ExecuteToolsInput,
  toolCallId: string,
  output: CallOutput,
): void {
  const call = input.calls.find((entry) => entry.toolCallId === toolCallId);
  if (!call) return;
  const { toolName, args } = call;
  published.publish({ type: 'toolStart', toolCallId, toolName, summary: summarizeToolCall(toolName, args) });
  const { isError, content } = output.message;
  published.publish({
    type: 'toolEnd',
    toolCallId,
    toolName,
    isError,
    willRetry: false,
    text: toolEndText(content),
  });
}

/** One call of the batch, with its own abort signal: the attempt's cancellation or its own timeout. */
async function runBatchedCall(
  deps: ExecuteBatchDependencies,
  input: ExecuteToolsInput,
  index: number,
  published: ActivityEventPublisher,
  checkpoint: ToolBatchCheckpoint,
): Promise<ExecuteToolOutput> {
  const context = Context.current();
  const call = input.calls[index];
  if (!call) throw new Error(`executeTools has no call ${index}`);
  const signal = AbortSignal.any([
    context.cancellationSignal,
    AbortSignal.timeout(msToNumber(input.callTimeout)),
  ]);
  const { calls: _all, concurrent: _mode, callTimeout: _timeout, ...shared } = input;
  return deps.runCall(
    { ...shared, ...call },
    {
      published,
      signal,
      onProgress: (toolCallId, partialResult) => {
        checkpoint.progress = { toolCallId, partialResult };
      },
    },
  );
}

/** Runs the calls one after another; stops at the first that throws (or once the batch is cancelled). */
async function inOrder(indices: number[], run: (index: number) => Promise<void>): Promise<unknown> {
  const { cancellationSignal } = Context.current();
  for (const index of indices) {
    if (cancellationSignal.aborted) return cancellationSignal.reason ?? new Error('cancelled');
    try {
      await run(index);
    } catch (error) {
      return error ?? new Error('a batched call failed');
    }
  }
  return undefined;
}

/** Waits for every call; the first thrown error, if any. */
async function firstFailure(running: Promise<void>[]): Promise<unknown> {
  const settled = await Promise.allSettled(running);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  return failed ? (failed.reason ?? new Error('a batched call failed')) : undefined;
}
