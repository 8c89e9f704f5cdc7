import type { WorkflowHandle } from '@temporalio/client';
import type { temporal as protoTypes } from '@temporalio/proto';
import proto from '@temporalio/proto';

// The package is CommonJS: its namespace is reachable through the default export only.
const { temporal } = proto;

type HistoryEvent = protoTypes.api.history.v1.IHistoryEvent;

/** The workflow's history size in bytes, encoded as the server stores and sends it. */
export async function historyBytes(handle: WorkflowHandle): Promise<number> {
  return encodedBytes(await storedHistory(handle));
}

/** A history's size, encoded as the server stores and sends it. */
export function encodedBytes(history: protoTypes.api.history.v1.IHistory): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/**
 * The latest run's history as the server stores it: payloads in the payload store stay references.
 * (`handle.fetchHistory()` fetches them, so it shows what a replay reads, not what history holds.)
 */
export async function storedHistory(handle: WorkflowHandle): Promise<protoTypes.api.history.v1.IHistory> {
  const { workflowService, options } = handle.client;
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await workflowService.getWorkflowExecutionHistory({
      namespace: options.namespace,
      execution: { workflowId: handle.workflowId },
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events };
}

/** The size of the largest payload's data anywhere in a history: what the payload limit applies to. */
export function largestPayload(history: protoTypes.api.history.v1.IHistory): number {
  let largest = 0;
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const data = (value as { data?: unknown }).data;
    if ('metadata' in value && data instanceof Uint8Array) largest = Math.max(largest, data.length);
    else for (const child of Object.values(value)) visit(child);
  };
  visit(history.events);
  return largest;
}

/** When the server recorded the event, in milliseconds since the epoch. */
export function eventMs(event: HistoryEvent): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** Timing of the last tool batch, from history event times. */
export interface ToolBatchTiming {
  /** The model call that asked for the tools completed → the next model call was scheduled. */
  batchMs: number;
  /** The model call that asked for the tools completed → the first tool execution was scheduled (one workflow task). */
  toExecutionMs: number;
  /** The first tool execution was scheduled → the last one completed: the executions alone. */
  executionsMs: number;
}

/** Which activity types are model calls and which tool executions, in a workflow's history. */
export interface ActivityRoles {
  isModelCall(activityType: string): boolean;
  isToolExecution(activityType: string): boolean;
}

const OUR_ACTIVITIES: ActivityRoles = {
  isModelCall: (type) => type === 'callModel',
  isToolExecution: (type) => type === 'executeTool',
};

/**
 * The last tool batch as the workflow saw it: PREPARE, every execution, and the workflow tasks in
 * between. `roles` tell another integration's activities apart (the peer's).
 */
export async function lastToolBatch(
  handle: WorkflowHandle,
  roles: ActivityRoles = OUR_ACTIVITIES,
): Promise<ToolBatchTiming> {
  const events = (await handle.fetchHistory()).events ?? [];
  const modelScheduled = new Set<string>();
  const modelCompletedAt: number[] = [];
  const modelScheduledAt: number[] = [];
  const executionScheduledAt: number[] = [];
  const executionScheduled = new Set<string>();
  const executionCompletedAt: number[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    const type = scheduled?.activityType?.name ?? '';
    if (scheduled && roles.isModelCall(type)) {
      modelScheduled.add(String(event.eventId));
      modelScheduledAt.push(eventMs(event));
    } else if (scheduled && roles.isToolExecution(type)) {
      executionScheduled.add(String(event.eventId));
      executionScheduledAt.push(eventMs(event));
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && modelScheduled.has(String(completed.scheduledEventId))) {
      modelCompletedAt.push(eventMs(event));
    }
    if (completed && executionScheduled.has(String(completed.scheduledEventId))) {
      executionCompletedAt.push(eventMs(event));
    }
  }
  // The turn's last model call answered with text; the one before it asked for the tools.
  const askedForTools = modelCompletedAt.at(-2);
  const nextCall = modelScheduledAt.at(-1);
  if (askedForTools === undefined || nextCall === undefined) throw new Error('No tool batch in this history');
  const firstExecution = executionScheduledAt.find((at) => at >= askedForTools) ?? Number.NaN;
  const lastCompletion = executionCompletedAt.at(-1) ?? Number.NaN;
  return {
    batchMs: nextCall - askedForTools,
    toExecutionMs: firstExecution - askedForTools,
    executionsMs: lastCompletion - firstExecution,
  };
}

/** What a turn is about in the Web UI: these rows are not counted as its overhead. */
export interface TurnContent {
  /** Updates that carry the user's messages and approvals. */
  updates: ReadonlySet<string>;
  /** Signals that carry them. */
  signals: ReadonlySet<string>;
}

/** `EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES` → `UpsertWorkflowSearchAttributes`. */
export const eventTypeName = (type: number): string =>
  String(temporal.api.enums.v1.EventType[type] ?? type)
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());

/**
 * The rows the Web UI's compact view shows for these events besides `content`, activities and child
 * workflows, by kind: workflow tasks are hidden there, an Update is one row (its acceptance), a
 * timer one (its start), every other event one.
 */
export function uiRowsBesides(events: readonly HistoryEvent[], content: TurnContent): Record<string, number> {
  const rows: Record<string, number> = {};
  const hidden =
    /^(WorkflowTask|ActivityTask|ChildWorkflow|StartChildWorkflow|WorkflowExecutionUpdate(Completed|Admitted)|Timer(Fired|Canceled))/;
  for (const event of events) {
    let kind = eventTypeName(event.eventType ?? 0);
    if (hidden.test(kind)) continue;
    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    if (update != null) {
      if (content.updates.has(update)) continue;
      kind = `Update ${update}`;
    } else if (signal != null) {
      if (content.signals.has(signal)) continue;
      kind = `signal ${signal}`;
    }
    rows[kind] = (rows[kind] ?? 0) + 1;
  }
  return rows;
}
