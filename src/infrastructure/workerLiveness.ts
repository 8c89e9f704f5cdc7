import {
  POLLER_GONE_MS,
  type Poller,
  protoTimeMs,
  recentPollerTimes,
  type TaskQueueService,
} from './taskQueuePollers.ts';

/**
 * How often a yiem worker tells the server that it runs (Temporal's worker heartbeat, which the
 * SDK sends every minute by default): a SIGKILLed worker is then told from a running one within
 * seconds, not after a long poll.
 */
export const WORKER_HEARTBEAT_INTERVAL_MS = 5_000;
/** A worker whose last heartbeat is older than this many of its intervals has stopped. */
const MISSED_HEARTBEATS = 3;
/** The SDK's default interval: a worker's first heartbeat does not say its own. */
const SDK_HEARTBEAT_INTERVAL_MS = 60_000;
/** `WORKER_STATUS_SHUTTING_DOWN` and `WORKER_STATUS_SHUTDOWN`: a worker sends its last heartbeat with one of them. */
const WORKER_STATUS_STOPPING = new Set([2, 3]);
const LIST_PAGE_SIZE = 100;

/** What the server keeps of one worker's heartbeats (ListWorkers). */
export interface WorkerBeat {
  /** Shut down or shutting down: it said so. */
  stopped: boolean;
  /** When it last sent one (epoch ms). */
  beatMs: number;
  /** How long it waits between two. */
  intervalMs: number;
}

/** The part of Temporal's WorkflowService that lists a task queue's workers by their heartbeats. */
export interface WorkerListService {
  listWorkers?(request: { namespace: string; pageSize: number; query: string }): Promise<{
    workersInfo?:
      | {
          workerHeartbeat?: {
            workerIdentity?: string | null;
            status?: number | null;
            heartbeatTime?: Timestamp | null;
            elapsedSinceLastHeartbeat?: { seconds?: unknown; nanos?: number | null } | null;
          } | null;
        }[]
      | null;
  }>;
}

type Timestamp = { seconds?: unknown; nanos?: number | null };

/** A poller, with its heartbeat when the server keeps one, and whether it has stopped. */
export interface PollerState extends Poller {
  beat?: WorkerBeat;
  gone: boolean;
}

/**
 * The latest heartbeat of each worker of `taskQueue`, by identity (a worker restarted with a fixed
 * identity has one per run); undefined when the server keeps none (no ListWorkers, or turned off).
 */
export async function workerBeats(
  service: WorkerListService,
  namespace: string,
  taskQueue: string,
): Promise<Map<string, WorkerBeat> | undefined> {
  if (!service.listWorkers) return undefined;
  const query = `TaskQueue = "${taskQueue.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  const response = await service
    .listWorkers({ namespace, pageSize: LIST_PAGE_SIZE, query })
    .catch(() => undefined);
  if (!response) return undefined;
  const beats = new Map<string, WorkerBeat>();
  for (const { workerHeartbeat: heartbeat } of response.workersInfo ?? []) {
    if (!heartbeat?.workerIdentity) continue;
    const interval = protoTimeMs(heartbeat.elapsedSinceLastHeartbeat);
    const beat: WorkerBeat = {
      stopped: WORKER_STATUS_STOPPING.has(heartbeat.status ?? 0),
      beatMs: protoTimeMs(heartbeat.heartbeatTime),
      intervalMs: interval > 0 ? interval : SDK_HEARTBEAT_INTERVAL_MS,
    };
    const known = beats.get(heartbeat.workerIdentity);
    if (!known || beat.beatMs > known.beatMs) beats.set(heartbeat.workerIdentity, beat);
  }
  return beats;
}

/**
 * Whether a worker polling a queue has stopped: its heartbeat says it shut down, or it missed a few
 * heartbeats (SIGKILLed); without heartbeats, its last poll is older than a running worker's ever
 * is (`pollerGoneMs`; the server lists a stopped poller for minutes). The one rule for the client's
 * `send` and `collect` and for the worker's look at the other workers of its queue.
 */
export function pollerGone(
  poller: Poller,
  beat: WorkerBeat | undefined,
  now = Date.now(),
  pollerGoneMs = POLLER_GONE_MS,
): boolean {
  if (beat && (beat.stopped || now - beat.beatMs > MISSED_HEARTBEATS * beat.intervalMs)) return true;
  return now - poller.lastPollMs > pollerGoneMs;
}

/** The workers that polled `taskQueue`'s tasks of `taskQueueType` lately, with their heartbeats and whether each has stopped. */
export async function pollerStates(
  service: TaskQueueService & WorkerListService,
  namespace: string,
  taskQueue: string,
  taskQueueType: number,
  options: { now?: number; pollerGoneMs?: number } = {},
): Promise<PollerState[]> {
  const now = options.now ?? Date.now();
  const [pollers, beats] = await Promise.all([
    recentPollerTimes(service, namespace, taskQueue, taskQueueType, now),
    workerBeats(service, namespace, taskQueue),
  ]);
  return pollers.map((poller) => {
    const beat = beats?.get(poller.identity);
    return {
      ...poller,
      ...(beat ? { beat } : {}),
      gone: pollerGone(poller, beat, now, options.pollerGoneMs),
    };
  });
}
