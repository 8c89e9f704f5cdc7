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
