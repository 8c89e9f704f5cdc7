import type { WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { decodeFromPayloadsAtIndex } from './historyPayloads.ts';

/** A tool call waiting for approval, as the server's history keeps it: read without a worker. */
export interface KeptApproval {
  /** What to approve it by once a worker runs (absent when the Web UI row's name was cut short). */
  approvalId: string | undefined;
  /** The call as the Web UI row names it: `tool(arguments)`. */
  call: string;
  /** When the wait began, milliseconds since the epoch. */
  requestedAt: number;
}

/** How a wait for approval names its Web UI row (`workflows/approvals.ts`): `awaiting approval: <call> · approval <id>`. */
const APPROVAL_ROW = /^awaiting approval: (.*?)(?: · approval (\S+))?$/s;

/**
 * The approvals the latest run waits for, from its history: each wait is a timer named after the
 * call and its approval id, open until the call is decided (fired or cancelled). Runs from before
 * those timers (patch `yiem-named-waits`) show none.
 */
export async function approvalsFromHistory(handle: WorkflowHandle): Promise<KeptApproval[]> {
  const runId = (await handle.describe()).runId;
  const events = (await handle.client.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
  const converter = handle.client.options.loadedDataConverter;
  const open = new Map<string, KeptApproval>();
  for (const event of events) {
    const started = event.timerStartedEventAttributes;
    const ended = event.timerFiredEventAttributes ?? event.timerCanceledEventAttributes;
    if (ended?.timerId) open.delete(ended.timerId);
    const named = event.userMetadata?.summary;
    if (!started?.timerId || !named) continue;
    const summary = await decodeFromPayloadsAtIndex<unknown>(converter, 0, [named as Payload]).catch(
      () => undefined,
    );
    const row = typeof summary === 'string' ? APPROVAL_ROW.exec(summary) : null;
    if (!row) continue;
    open.set(started.timerId, {
      approvalId: row[2],
      call: row[1] ?? '',
      requestedAt: optionalTsToMs(event.eventTime) ?? 0,
    });
  }
  return [...open.values()];
}
