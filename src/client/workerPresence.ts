import type { WorkflowClient } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE } from '../contract/taskQueue.ts';
import {
  lastPoll,
  POLLER_GONE_MS,
  recentPollerTimes,
  TASK_QUEUE_TYPE_ACTIVITY,
  TASK_QUEUE_TYPE_WORKFLOW,
  type TaskQueueService,
  YIEM_IDENTITY_MARK,
} from '../infrastructure/taskQueuePollers.ts';
import { NoWorkerError } from './errors.ts';

/** How long a queue is looked at for a first poller: a worker started a moment ago polls within this. */
const FIRST_POLL_WAIT_MS = 5_000;
const LOOK_EVERY_MS = 500;
/** How often a waiting `send` looks whether its queue still has a worker. */
const WATCH_EVERY_MS = 5_000;
/** A queue seen served is not asked again for this long: one DescribeTaskQueue per queue per interval. */
const SERVED_REUSE_MS = 10_000;
/** How many conversations' task queues are looked at to name the queues that have workers. */
const QUEUES_FROM_CONVERSATIONS = 200;
const MAX_QUEUES_DESCRIBED = 25;

/**
 * Whether a worker polls a task queue, asked of Temporal (DescribeTaskQueue) before a conversation
 * is started or messaged there: with none, the start or the message would wait silently forever, and
 * a typo'd queue is the first mistake people make.
 */
export class WorkerPresence {
  readonly #service: TaskQueueService;
  readonly #namespace: string;
  readonly #workflows: WorkflowClient;
  readonly #served = new Map<string, number>();

  constructor(service: TaskQueueService, namespace: string, workflows: WorkflowClient) {
    this.#service = service;
    this.#namespace = namespace;
    this.#workflows = workflows;
  }

  /**
   * Resolves once a worker polls `taskQueue`'s workflow tasks (waiting a few seconds for one that is
   * starting); throws `NoWorkerError` naming the queues that have yiem workers otherwise. When the
   * server cannot be asked, it resolves: the call that follows then fails with its own reason.
   */
  async require(taskQueue: string, conversationId?: string): Promise<void> {
    const seen = this.#served.get(taskQueue);
    if (seen !== undefined && Date.now() - seen < SERVED_REUSE_MS) return;
    const deadline = Date.now() + FIRST_POLL_WAIT_MS;
    for (;;) {
      let pollers: string[];
      try {
        pollers = await this.#pollers(taskQueue);
      } catch {
        return;
      }
      if (pollers.length > 0) {
        this.#served.set(taskQueue, Date.now());
        return;
      }
      if (Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
    }
    throw new NoWorkerError(taskQueue, await this.queuesWithWorkers(taskQueue), conversationId);
  }

  /**
   * The task queues a yiem worker polls now, among the default queue and those of recent
   * conversations (Temporal lists no task queues, so these are the ones a user can have meant), and
   * `first`, looked at before them.
   */
  async queuesWithWorkers(except?: string, first: string[] = []): Promise<string[]> {
    const candidates = new Set([...first, DEFAULT_TASK_QUEUE, ...(await this.#conversationQueues())]);
    if (except !== undefined) candidates.delete(except);
    const queues = [...candidates].slice(0, MAX_QUEUES_DESCRIBED);
    const served = await Promise.all(
      queues.map(async (queue) => {
        const pollers = await this.#pollers(queue).catch(() => []);
        return pollers.some((identity) => identity.includes(YIEM_IDENTITY_MARK));
      }),
    );
    return queues.filter((_, index) => served[index]).sort();
  }

  /**
   * Resolves, with the queue's last poll, once no worker has polled `taskQueue` for longer than a
   * running one ever waits between polls (its workers stopped); never while `signal` is not aborted
   * and a worker polls. A look the server does not answer counts as a worker still there.
   */
  async untilGone(taskQueue: string, signal: AbortSignal): Promise<Date | undefined> {
    // A queue that lists no poller (a cluster node that owned it just died) says nothing of when its
    // workers last polled: they count as polling when the watch began.
    const watchedSince = Date.now();
    while (!signal.aborted) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, WATCH_EVERY_MS);
        signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
        signal.addEventListener('abort', resolve, { once: true });
      });
      if (signal.aborted) break;
      const polls = await Promise.all(
        [TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY].map((type) =>
          lastPoll(this.#service, this.#namespace, taskQueue, type).catch(() => new Date()),
        ),
      );
      const latest = Math.max(0, ...polls.map((poll) => poll?.getTime() ?? 0));
      if (Date.now() - Math.max(latest, watchedSince) > POLLER_GONE_MS) {
        return latest > 0 ? new Date(latest) : undefined;
      }
    }
    return undefined;
  }

  /** The workers polling `taskQueue` now: the server lists stopped ones for minutes. */
  async #pollers(taskQueue: string): Promise<string[]> {
    const now = Date.now();
    const pollers = await recentPollerTimes(
      this.#service,
      this.#namespace,
      taskQueue,
      TASK_QUEUE_TYPE_WORKFLOW,
      now,
    );
    return pollers
      .filter(({ lastPollMs }) => now - lastPollMs <= POLLER_GONE_MS)
      .map(({ identity }) => identity);
  }

  async #conversationQueues(): Promise<string[]> {
    const queues = new Set<string>();
    try {
      let read = 0;
      const query = "WorkflowType = 'conversationWorkflow'";
      for await (const execution of this.#workflows.list({ query, pageSize: 100 })) {
        queues.add(execution.taskQueue);
        if (++read >= QUEUES_FROM_CONVERSATIONS) break;
      }
    } catch {
      // Without visibility the default queue is still looked at.
    }
    return [...queues];
  }
}
