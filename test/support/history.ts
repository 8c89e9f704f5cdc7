import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tokenLimiterWorkflowId } from '../../src/contract/tokenLimiter.ts';

export interface ScheduledActivity {
  type: string;
  activityId: string;
  summary: string | undefined;
  /** The id of the history event that scheduled it. */
  scheduledEventId: number;
  /** The id of the event that closed it (completed, failed, timed out, cancelled), if any. */
  closedEventId: number | undefined;
}

/**
 * How a workflow's history ran calls: its local activity markers (of any local activity) and its
 * activities of type `activityType`.
 */
export async function executions(
  handle: WorkflowHandle,
  activityType: string,
): Promise<{ markers: number; activities: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    markers: events.filter(
      (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length,
    activities: events.filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
    ).length,
  };
}

/** The activities a workflow scheduled, as its history (and the Web UI) records them. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<ScheduledActivity[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const closedBy = new Map<number, number>();
  for (const event of events) {
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (closed?.scheduledEventId) closedBy.set(Number(closed.scheduledEventId), Number(event.eventId));
  }
  return events.flatMap((event) => {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (!attributes) return [];
    const summaryPayload = event.userMetadata?.summary;
    const scheduledEventId = Number(event.eventId);
    return [
      {
        type: attributes.activityType?.name ?? '',
        activityId: attributes.activityId ?? '',
        summary: summaryPayload
          ? defaultPayloadConverter.fromPayload<string>(summaryPayload as never)
          : undefined,
        scheduledEventId,
        closedEventId: closedBy.get(scheduledEventId),
      },
    ];
  });
}

/**
 * The whole history as JSON text, with every payload's data decoded to UTF-8 text, to check what it
 * does and does not contain.
 */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  // The history's toJSON writes payload bytes as base64 before a replacer sees them.
  return JSON.stringify(await handle.fetchHistory(), (key, value: unknown) =>
    key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value,
  );
}

/**
 * Whether the token limiter of `model` on `taskQueue` (its workflow) recorded the reservation of the
 * first request of the first attempt of activity `activityId` of `conversation`'s current run: the
 * id `activities/tokenLimit.ts` gives an attempt's numbered requests.
 */
export async function tokenReservationRecorded(
  client: Client,
  taskQueue: string,
  model: string,
  conversation: WorkflowHandle,
  activityId: string | null | undefined,
): Promise<boolean> {
  const { runId } = await conversation.describe();
  const limiter = client.workflow.getHandle(tokenLimiterWorkflowId(taskQueue, model));
  return (await historyText(limiter)).includes(`${conversation.workflowId}/${runId}/${activityId}/1/0`);
}
