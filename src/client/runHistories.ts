import type { WorkflowHandle } from '@temporalio/client';
import type proto from '@temporalio/proto';

export type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** One run of a conversation and its history. */
export interface RunHistory {
  runId: string;
  events: HistoryEvent[];
}

/**
 * The histories of a conversation's runs, its latest run first, back along continue-as-new: a
 * history read per run, so a caller that stops early reads no older run.
 */
export async function* runHistories(handle: WorkflowHandle): AsyncGenerator<RunHistory> {
  let runId: string | undefined = (await handle.describe()).runId;
  while (runId) {
    const events: HistoryEvent[] =
      (await handle.client.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
    yield { runId, events };
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
}

/**
 * When the event happened, in milliseconds since 1970. `Number`, not the SDK's `Long` arithmetic: an
 * exported history parsed by `historyFromJSON` carries its seconds as plain numbers.
 */
export function eventTimeMs(event: HistoryEvent): number {
  const time = event.eventTime;
  return time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : 0;
}
