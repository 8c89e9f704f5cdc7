import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { ConversationWorkflow } from '../contract/definitions.ts';
import { statusQuery } from '../contract/definitions.ts';
import type { CallModelInput } from '../contract/protocol.ts';
import type { RewindOptions, RewindResult } from '../contract/types/conversation.ts';
import { decodeFromPayloadsAtIndex } from './historyPayloads.ts';
import { type HistoryEvent, runHistories } from './runHistories.ts';
import { readTranscriptEntries } from './transcriptReader.ts';
import { readTurnBoundaries, turnStartIndex } from './turnBoundaries.ts';

type Long = proto.temporal.api.workflowservice.v1.ResetWorkflowExecutionRequest['workflowTaskFinishEventId'];
const { ResetReapplyType, ResetReapplyExcludeType } = proto.temporal.api.enums.v1;

/**
 * Resets the conversation (Temporal's workflow reset) to the workflow task just before turn
 * `toTurn` began, in the run where it began. Discarded: that turn and every later one (their
 * messages, replies, tool results, approvals and callbacks waiting in them), and every message,
 * Signal and Update that reached the conversation after that point; a `send` waiting for one of
 * them fails. Not undone: what the discarded tool calls did outside the conversation. Kept: the
 * messages that had reached it before that point (they arrived while the previous turn ran):
 * turn `toTurn` runs again at once on them.
 */
export async function rewindConversation(
  handle: WorkflowHandle<ConversationWorkflow>,
  rewind: RewindOptions,
): Promise<RewindResult> {
  const boundaries = await readTurnBoundaries(handle);
  const { toTurn } = rewind;
  const keptMessages = turnStartIndex(handle.workflowId, boundaries, toTurn, false);
  const latest = boundaries.status.turn;
  const { runId, events, modelCalls } = await runWhereTurnBegan(handle, toTurn);
  const resetEventId = resetPoint(events, turnStartTask(handle, events, modelCalls, toTurn));
  const { client } = handle;
  const response = await client.workflowService.resetWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId: handle.workflowId, runId },
    reason: rewind.reason ?? `yiem rewind to before turn ${toTurn}`,
    // protobufjs takes a number for an int64 field; its type names only `Long`.
    workflowTaskFinishEventId: resetEventId as unknown as Long,
    requestId: randomUUID(),
    resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
    resetReapplyExcludeTypes: [
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL,
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE,
    ],
    identity: client.options.identity ?? 'yiem',
  });
  const newRunId = response.runId ?? '';
  const rewound = client.getHandle<ConversationWorkflow>(handle.workflowId, newRunId);
  return {
    runId: newRunId,
    resetRunId: runId,
    resetEventId,
    discardedTurns: { from: toTurn, to: latest },
    keptMessages,
    discardedMessages: boundaries.status.messageCount - keptMessages,
    requeuedMessages: await requeuedMessages(rewound, toTurn, keptMessages),
  };
}

/**
 * The messages the rewound conversation kept for turn `turn`: still queued, or already drained
 * by that turn run again. A query waits for the new run's first workflow task, so it sees them.
 */
async function requeuedMessages(
  rewound: WorkflowHandle,
  turn: number,
  keptMessages: number,
): Promise<number> {
  const status = await rewound.query(statusQuery);
  if (status.turn < turn) return status.pendingMessages;
  const entries = await readTranscriptEntries(rewound, { fromIndex: keptMessages });
  const firstReply = entries.findIndex((entry) => entry.role !== 'user');
  return (firstReply === -1 ? entries.length : firstReply) + status.pendingMessages;
}

/** The turn of each model call a run's history schedules, by the event that schedules it. */
type ModelCallTurns = Map<HistoryEvent, number>;

/** The run (of the conversation's continue-as-new chain) whose history has turn `turn`'s first model call. */
async function runWhereTurnBegan(
  handle: WorkflowHandle,
  turn: number,
): Promise<{ runId: string; events: HistoryEvent[]; modelCalls: ModelCallTurns }> {
  for await (const { runId, events } of runHistories(handle)) {
    const modelCalls = await modelCallTurns(handle, events);
    const firstTurn = modelCalls.values().next().value;
    if (firstTurn !== undefined && firstTurn <= turn) return { runId, events, modelCalls };
  }
  throw new Error(`No run of conversation ${handle.workflowId} has the start of turn ${turn} in its history`);
}

/** The turns of a run's model calls, in history order, each decoded once. */
async function modelCallTurns(handle: WorkflowHandle, events: HistoryEvent[]): Promise<ModelCallTurns> {
  const turns: ModelCallTurns = new Map();
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const input = await decodeFromPayloadsAtIndex<CallModelInput>(
      handle.client.options.loadedDataConverter,
      0,
      scheduled.input?.payloads,
    );
    turns.set(event, input.turn);
  }
  return turns;
}

/**
 * The WorkflowTaskCompleted event of the task that began turn `turn`: the one that scheduled its
 * first model call, or the worker's default-model lookup before it (the first turn of a run asks it).
 */
function turnStartTask(
  handle: WorkflowHandle,
  events: HistoryEvent[],
  modelCalls: ModelCallTurns,
  turn: number,
): number {
  let lookup: number | undefined;
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'defaultModel')
      lookup = Number(scheduled.workflowTaskCompletedEventId);
    const callTurn = modelCalls.get(event);
    if (callTurn === undefined) continue;
    if (callTurn === turn) return lookup ?? Number(scheduled?.workflowTaskCompletedEventId);
    lookup = undefined;
  }
  throw new Error(`Turn ${turn} of conversation ${handle.workflowId} has no model call in its run's history`);
}

/**
 * Where to reset to. A task woken only by messages (Signals, or Updates delivered in the task
 * itself) began the turn from idle: resetting to the task before it drops those messages too. A
 * task woken by the previous turn's last result (an activity, timer or child) began it on messages
 * queued meanwhile, which are in history before it: those stay.
 */
function resetPoint(events: HistoryEvent[], turnTask: number): number {
  const taskIndex = events.findIndex((event) => Number(event.eventId) === turnTask);
  const scheduledId = Number(events[taskIndex]?.workflowTaskCompletedEventAttributes?.scheduledEventId);
  const before = events.filter((event) => Number(event.eventId) < scheduledId);
  const previousTask = before.findLast((event) => event.workflowTaskCompletedEventAttributes);
  if (!previousTask) return turnTask;
  const wokenBy = before.filter((event) => Number(event.eventId) > Number(previousTask.eventId));
  return wokenBy.some(endsWork) ? turnTask : Number(previousTask.eventId);
}

/** An event that hands the workflow the end of something it started: what wakes a turn that runs. */
function endsWork(event: HistoryEvent): boolean {
  return Boolean(
    event.activityTaskCompletedEventAttributes ||
      event.activityTaskFailedEventAttributes ||
      event.activityTaskTimedOutEventAttributes ||
      event.activityTaskCanceledEventAttributes ||
      event.timerFiredEventAttributes ||
      event.childWorkflowExecutionStartedEventAttributes ||
      event.childWorkflowExecutionCompletedEventAttributes ||
      event.childWorkflowExecutionFailedEventAttributes ||
      event.childWorkflowExecutionCanceledEventAttributes ||
      event.childWorkflowExecutionTimedOutEventAttributes ||
      event.childWorkflowExecutionTerminatedEventAttributes ||
      event.startChildWorkflowExecutionFailedEventAttributes ||
      event.externalWorkflowExecutionSignaledEventAttributes ||
      event.signalExternalWorkflowExecutionFailedEventAttributes,
  );
}
