import type { WorkflowHandle } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { postSignal, promptUpdate } from '../contract/definitions.ts';
import type { CallModelOutput, ConversationCarryOver, ExecuteToolOutput } from '../contract/protocol.ts';
import { YIEM_COST, YIEM_STATUS, YIEM_TURNS } from '../contract/searchAttributes.ts';
import type { TranscriptEntry } from '../contract/transcript.ts';
import type { Message } from '../contract/types/messages.ts';
import { ContentStore } from '../infrastructure/storage/contentStore.ts';
import { lastPoll, TASK_QUEUE_TYPE_WORKFLOW } from '../infrastructure/taskQueuePollers.ts';
import { decodeFromPayloadsAtIndex } from './historyPayloads.ts';
import { approvalsFromHistory, type KeptApproval } from './keptApprovals.ts';
import { eventTimeMs, type HistoryEvent } from './runHistories.ts';
import { resolveEntry } from './transcriptReader.ts';

/**
 * How long a read waits for a worker's answer before it falls back to what the server keeps: a
 * worker answers a Query in milliseconds, while a query to a queue no worker serves waits ~30 s.
 */
export const WORKER_ANSWER_MS = 1_000;
/** How long after giving up on it a worker's answer may still come before its query is called off. */
export const QUERY_GRACE_MS = 500;

/** `pending`'s value, or `undefined` when it does not settle within `ms` (or fails); it is left to finish. */
export async function answerWithin<T>(pending: Promise<T>, ms = WORKER_ANSWER_MS): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([pending.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the server keeps of a conversation, read without a worker: its execution, search attributes and queue. */
export interface ServerRecord {
  conversationId: string;
  /** Temporal's execution status: `RUNNING`, `COMPLETED`, … */
  executionStatus: string;
  taskQueue: string;
  /** `YiemStatus`, `YiemTurns`, `YiemCost` as the workflow last set them (absent without live search attributes). */
  status: string | undefined;
  turns: number | undefined;
  cost: number | undefined;
  /** The tool calls waiting for approval, from the latest run's history (none while it is idle). */
  pendingApprovals: KeptApproval[];
  /** When a worker last polled the queue, as far as the server remembers (a few minutes). */
  lastPoll: Date | undefined;
  /** Why no worker answered, in words: `no worker on task queue "q" since <its last poll>: …`. */
  noWorker: string;
}

/** The conversation's record on the server, with why its worker did not answer. */
export async function readServerRecord(handle: WorkflowHandle): Promise<ServerRecord> {
  const description = await handle.describe();
  const attributes = description.typedSearchAttributes;
  const { workflowService, options } = handle.client;
  const { taskQueue } = description;
  const last = await lastPoll(workflowService, options.namespace, taskQueue, TASK_QUEUE_TYPE_WORKFLOW).catch(
    () => undefined,
  );
  const status = attributes.get(YIEM_STATUS);
  const waits = description.status.name === 'RUNNING' && status !== 'idle';
  return {
    conversationId: handle.workflowId,
    executionStatus: description.status.name,
    taskQueue,
    status,
    turns: attributes.get(YIEM_TURNS),
    cost: attributes.get(YIEM_COST),
    pendingApprovals: waits ? await approvalsFromHistory(handle).catch(() => []) : [],
    lastPoll: last,
    noWorker: noWorkerNote(taskQueue, last),
  };
}

/** "no worker on task queue "q" since <its last poll>": the one wording of a conversation whose worker is gone. */
function noWorkerNote(taskQueue: string, last: Date | undefined): string {
  const since = last ? ` since ${last.toISOString()} (its last poll)` : '';
  return `no worker on task queue "${taskQueue}"${since}: none answered within ${WORKER_ANSWER_MS / 1000} s`;
}

/**
 * The transcript as the server's history of the latest run records it: the run's carried messages,
 * then each message sent, model reply and tool result in the order the history took them, those of
 * local activities from their markers. It misses refused or failed tool calls' results, and a
 * running turn's order may differ from the worker's: a fallback for when no worker answers.
 */
export async function transcriptFromHistory(handle: WorkflowHandle): Promise<Message[]> {
  const runId = (await handle.describe()).runId;
  const events = (await handle.client.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
  const converter = handle.client.options.loadedDataConverter;
  const entries = await historyEntries(events, converter);
  const store = ContentStore.of(converter);
  return Promise.all(entries.map((entry, index) => resolveEntry(entry, store, handle.workflowId, index)));
}

/**
 * The transcript entries one run's history records (see `transcriptFromHistory`), large messages
 * left as their outlines with the reference: a history read from a server or from an exported file.
 */
export async function historyEntries(
  events: readonly HistoryEvent[],
  converter: LoadedDataConverter,
): Promise<TranscriptEntry[]> {
  const decode = <T>(payloads: unknown, index = 0): Promise<T | undefined> =>
    decodeFromPayloadsAtIndex<T>(converter, index, payloads as Payload[] | undefined).catch(() => undefined);
  const entries: TranscriptEntry[] = [];
  const activities = new Map<string, string>();
  for (const event of events) entries.push(...(await entriesOf(event, activities, decode)));
  return entries;
}

/** The marker the Temporal SDK's core records a local activity's outcome in. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

type Decode = <T>(payloads: unknown, index?: number) => Promise<T | undefined>;

async function entriesOf(
  event: HistoryEvent,
  activities: Map<string, string>,
  decode: Decode,
): Promise<TranscriptEntry[]> {
  const timestamp = eventTimeMs(event);
  const started = event.workflowExecutionStartedEventAttributes;
  if (started) return (await decode<ConversationCarryOver>(started.input?.payloads, 1))?.messages ?? [];
  const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
  if (accepted?.name === promptUpdate.name)
    return userEntry(await decode(accepted.args?.payloads), timestamp);
  const signaled = event.workflowExecutionSignaledEventAttributes;
  if (signaled?.signalName === postSignal.name)
    return userEntry(await decode(signaled.input?.payloads), timestamp);
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (scheduled) activities.set(String(event.eventId), scheduled.activityType?.name ?? '');
  const completed = event.activityTaskCompletedEventAttributes;
  if (completed)
    return resultEntries(activities.get(String(completed.scheduledEventId)), completed.result, decode);
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) return [];
  // A local activity's type and result are in its marker: the call never reached the server.
  const data = await decode<{ activity_type?: string }>(marker.details?.data?.payloads);
  return resultEntries(data?.activity_type, marker.details?.result, decode);
}

/** The messages an activity's result adds to the transcript: a model's reply or a tool's result. */
async function resultEntries(
  type: string | undefined,
  result: { payloads?: unknown } | null | undefined,
  decode: Decode,
): Promise<TranscriptEntry[]> {
  if (type === 'callModel') {
    const reply = await decode<CallModelOutput>(result?.payloads);
    if (!reply) return [];
    const {
      events: _events,
      prepared: _prepared,
      storedMessages: _stored,
      contextWindow: _window,
      ...message
    } = reply;
    return [message];
  }
  if (type === 'executeTool') {
    const output = await decode<ExecuteToolOutput>(result?.payloads);
    return output ? [output.message] : [];
  }
  return [];
}

function userEntry(text: unknown, timestamp: number): TranscriptEntry[] {
  return typeof text === 'string' ? [{ role: 'user', content: text, timestamp }] : [];
}
