import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

export interface ScheduledActivity {
  type: string;
  activityId: string;
  summary: string | undefined;
}

/** The activities a workflow scheduled, as its history (and the Web UI) records them. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<ScheduledActivity[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (!attributes) return [];
    const summaryPayload = event.userMetadata?.summary;
    return [
      {
        type: attributes.activityType?.name ?? '',
        activityId: attributes.activityId ?? '',
        summary: summaryPayload
          ? defaultPayloadConverter.fromPayload<string>(summaryPayload as never)
          : undefined,
      },
    ];
  });
}

/** The whole history as JSON text, to check what it does and does not contain. */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  return JSON.stringify(await handle.fetchHistory());
}
