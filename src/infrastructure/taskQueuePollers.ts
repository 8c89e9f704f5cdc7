/** The part of Temporal's WorkflowService that lists a task queue's pollers. */
export interface TaskQueueService {
  describeTaskQueue(request: {
    namespace: string;
    taskQueue: { name: string; kind: number };
    taskQueueType: number;
  }): Promise<{
    pollers?:
      | { identity?: string | null; lastAccessTime?: { seconds?: unknown; nanos?: number | null } | null }[]
      | null;
  }>;
}

const TASK_QUEUE_KIND_NORMAL = 1;
/** What every yiem worker's identity holds after its process id and host (`<pid>@<host> yiem(…)`). */
export const YIEM_IDENTITY_MARK = ' yiem(';
export const TASK_QUEUE_TYPE_WORKFLOW = 1;
export const TASK_QUEUE_TYPE_ACTIVITY = 2;
/** Pollers not seen for this long are taken to have stopped (an idle worker re-polls about every minute). */
const RECENT_POLL_MS = 2 * 60_000;
/**
 * A worker whose last poll is older than this has stopped: the server ends a long poll after a
 * minute and a running worker polls again at once, so a live one's last poll is never much older.
 * (The server keeps listing a stopped one for minutes.)
 */
export const POLLER_GONE_MS = 70_000;

/** A worker polling a task queue, and when it last began a poll (epoch ms). */
export interface Poller {
  identity: string;
  lastPollMs: number;
}

/** The identities of the workers that polled `taskQueue`'s workflow or activity tasks in the last two minutes. */
export async function recentPollers(
  service: TaskQueueService,
  namespace: string,
  taskQueue: string,
  taskQueueType: number,
  now = Date.now(),
): Promise<string[]> {
  return (await recentPollerTimes(service, namespace, taskQueue, taskQueueType, now)).map(
    (poller) => poller.identity,
  );
}

/**
 * The workers that polled in the last two minutes, with when each last began a poll. A live idle
 * worker's time is that of its pending long poll (up to a minute old); a stopped one's only ages.
 */
export async function recentPollerTimes(
  service: TaskQueueService,
  namespace: string,
  taskQueue: string,
  taskQueueType: number,
  now = Date.now(),
): Promise<Poller[]> {
  const response = await service.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
    taskQueueType,
  });
  return (response.pollers ?? [])
    .map((poller) => ({ identity: poller.identity ?? '', lastPollMs: protoTimeMs(poller.lastAccessTime) }))
    .filter((poller) => now - poller.lastPollMs <= RECENT_POLL_MS);
}

/** When a worker last polled `taskQueue`'s tasks of `taskQueueType`, as far as the server remembers (a few minutes). */
export async function lastPoll(
  service: TaskQueueService,
  namespace: string,
  taskQueue: string,
  taskQueueType: number,
): Promise<Date | undefined> {
  const response = await service.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
    taskQueueType,
  });
  const latest = Math.max(0, ...(response.pollers ?? []).map((poller) => protoTimeMs(poller.lastAccessTime)));
  return latest > 0 ? new Date(latest) : undefined;
}

/** A protobuf Timestamp or Duration in milliseconds. */
export function protoTimeMs(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!time) return 0;
  return Number(String(time.seconds ?? 0)) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}
