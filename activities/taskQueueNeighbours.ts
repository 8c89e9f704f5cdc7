import { createHash } from 'node:crypto';
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LIVE_ANNOUNCEMENT, OLD_LIVE_ANNOUNCEMENT } from '../src/infrastructure/storage/liveChannel.ts';
import {
  POLLER_GONE_MS,
  TASK_QUEUE_TYPE_ACTIVITY,
  type TaskQueueService,
  YIEM_IDENTITY_MARK,
} from '../src/infrastructure/taskQueuePollers.ts';
import { pollerStates, type WorkerListService } from '../src/infrastructure/workerLiveness.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import type { ToolRegistry } from './registry/registry.ts';

/**
 * What a yiem worker serves, written into its Temporal identity (`<pid>@<host> … yiem(m<model>
 * t<tools>)`) so that every worker of a task queue can see what the others serve: Temporal hands
 * each task to any worker polling the queue, and two workers with different models or tools on one
 * queue answer each other's conversations. Both are short hashes: Temporal writes the identity into
 * most events of every conversation's history.
 */
export interface WorkerSignature {
  /** A hash of `describeModels`' line; absent for a worker that runs no model calls (a tool queue's). */
  model?: string;
  /** A hash of the sorted tool names. */
  tools: string;
}

const SIGNATURE = new RegExp(` yiem\\((?:m([0-9a-f]{8}) )?t([0-9a-f]{8})(?:${LIVE_ANNOUNCEMENT})?\\)$`);
/** Earlier releases wrote the model's line and the tools' hash in words: still read, for rolling upgrades. */
const OLD_SIGNATURE = new RegExp(
  ` yiem\\((?:(model .+), )?tools ([0-9a-f]{8})(?:${OLD_LIVE_ANNOUNCEMENT})?\\)$`,
);

/** How long one look at the queue's pollers is reused: one DescribeTaskQueue call per worker per interval. */
const LOOK_INTERVAL_MS = 10_000;
/**
 * When another worker counts as running. The server keeps a poller for minutes after its process
 * died, and a running idle worker's last poll is that of its pending long poll, up to a minute old:
 * so one runs when it has sent a heartbeat or polled again since this worker first saw it, or polled
 * in the last `aliveMs` after this worker started. One that said it shut down, or missed a few
 * heartbeats, has stopped (`pollerGone`); without heartbeats, so has one that has not polled for
 * `goneMs`: the server ends a long poll after a minute, and a running worker polls again at once. In
 * between, it is looked at every `lookAgainMs` until one or the other shows.
 */
export interface LivenessTiming {
  aliveMs: number;
  goneMs: number;
  lookAgainMs: number;
}

const LIVENESS: LivenessTiming = { aliveMs: 5_000, goneMs: POLLER_GONE_MS, lookAgainMs: 2_000 };

const shortHash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 8);

export function toolSetHash(names: string[]): string {
  return shortHash([...names].sort().join(','));
}

/** What a worker serves: `models`, `describeModels`' line (undefined without model calls), and its tools. */
export function workerSignature(models: string | undefined, toolNames: string[]): WorkerSignature {
  return { ...(models ? { model: shortHash(models) } : {}), tools: toolSetHash(toolNames) };
}

/**
 * The worker's identity with what it serves; `live` says that it copies conversations' events to
 * its payload store's live channel (`LiveChannel`), where followers may read them.
 */
export function identityWithSignature(
  base: string | undefined,
  signature: WorkerSignature,
  live = false,
): string {
  const model = signature.model ? `m${signature.model} ` : '';
  const announcement = live ? LIVE_ANNOUNCEMENT : '';
  return `${base ?? `${process.pid}@${os.hostname()}`}${YIEM_IDENTITY_MARK}${model}t${signature.tools}${announcement})`;
}

export function signatureOf(identity: string): WorkerSignature | undefined {
  const match = SIGNATURE.exec(identity);
  if (match?.[2]) return { ...(match[1] ? { model: match[1] } : {}), tools: match[2] };
  const old = OLD_SIGNATURE.exec(identity);
  if (!old?.[2]) return undefined;
  return { ...(old[1] ? { model: shortHash(old[1]) } : {}), tools: old[2] };
}

/** Another yiem worker on the same task queue that serves something else. */
export interface Neighbour {
  identity: string;
  signature: WorkerSignature;
  /** When it last began a poll (epoch ms). */
  lastPollMs: number;
  /** When it last sent a heartbeat (epoch ms), if the server keeps them. */
  beatMs?: number;
  /** It has stopped (`pollerGone`). */
  gone: boolean;
}

/**
 * Watches the other workers of this worker's task queue. A worker that calls another model is a
 * conflict (a conversation's answers would come from either); one with other tools is warned about.
 */
export class TaskQueueNeighbours {
  #identity: string | undefined;
  #signature: WorkerSignature | undefined;
  /** `describeModels`' line, for messages: the signature holds only its hash. */
  #models: string | undefined;
  #looked: { at: number; neighbours: Promise<Neighbour[]> } | undefined;
  readonly #warned = new Set<string>();
  /** Workers seen to have stopped, by identity, with the last poll they were judged by. */
  readonly #gone = new Map<string, number>();
  /** Each other worker's last poll and heartbeat when this worker first saw it: a later one shows it runs. */
  readonly #firstSeen = new Map<string, { lastPollMs: number; beatMs: number | undefined }>();
  #boundAt = Date.now();
  readonly #log: (message: string) => void;
  readonly #timing: LivenessTiming;

  constructor(log: (message: string) => void, timing: LivenessTiming = LIVENESS) {
    this.#log = log;
    this.#timing = timing;
  }

  /** Set when the worker is configured: the identity it polls with and what it serves. */
  bind(identity: string, signature: WorkerSignature, models?: string): void {
    this.#identity = identity;
    this.#signature = signature;
    this.#models = models;
    this.#boundAt = Date.now();
  }

  get identity(): string | undefined {
    return this.#identity;
  }

  /**
   * The other yiem workers recently polling `taskQueue`'s activities with another model or tools.
   * `fresh`: look now (at start) rather than reuse a look of the last few seconds (on each call).
   */
  async differing(
    service: TaskQueueService & WorkerListService,
    namespace: string,
    taskQueue: string,
    options: { fresh?: boolean } = {},
  ): Promise<Neighbour[]> {
    const own = this.#signature;
    if (!own) return [];
    const now = Date.now();
    const neighbours = options.fresh
      ? this.#look(service, namespace, taskQueue, now)
      : this.#cachedLook(service, namespace, taskQueue, now);
    return (await neighbours).filter(
      ({ signature, gone }) =>
        !gone &&
        (signature.tools !== own.tools || (signature.model && own.model && signature.model !== own.model)),
    );
  }

  /**
   * Why this worker must not answer a model call on `taskQueue`: another worker there calls another
   * model. Logged once per other worker; tool sets that differ are logged too, not refused.
   */
  async modelConflict(
    service: TaskQueueService & WorkerListService,
    namespace: string,
    taskQueue: string,
  ): Promise<string | undefined> {
    const differing = await this.differing(service, namespace, taskQueue).catch(() => []);
    this.warn(differing, taskQueue);
    const own = this.#signature?.model;
    const conflicting = differing.filter(
      ({ signature, identity, lastPollMs }) =>
        signature.model && own && signature.model !== own && this.#gone.get(identity) !== lastPollMs,
    );
    const other = await this.#running(service, namespace, taskQueue, conflicting);
    if (!other) return undefined;
    return `Worker ${this.#identity} (${this.#models ?? own}) shares task queue "${taskQueue}" with worker ${other.identity}, which calls another model. Temporal hands each call to any worker of a queue, so this conversation's answers would come from either: give each agent its own task queue (the taskQueue option of createAgentWorker and AgentClient, env YIEM_TASK_QUEUE, or --task-queue).`;
  }

  /**
   * The first of `candidates` that still runs, or undefined once each has shown it stopped: one that
   * began a poll in the last seconds runs, and so does one that sends a heartbeat or polls again
   * while it is watched; one that shuts down, misses its heartbeats or, without them, whose last poll
   * grows older than a long poll lasts, has stopped.
   */
  async #running(
    service: TaskQueueService & WorkerListService,
    namespace: string,
    taskQueue: string,
    candidates: Neighbour[],
  ): Promise<Neighbour | undefined> {
    const { lookAgainMs } = this.#timing;
    let watched = candidates;
    while (watched.length > 0) {
      const alive = watched.find((neighbour) => this.#runs(neighbour));
      if (alive) return alive;
      await new Promise((resolve) => setTimeout(resolve, lookAgainMs));
      const seen = await this.#look(service, namespace, taskQueue, Date.now()).catch(() => watched);
      const next: Neighbour[] = [];
      for (const neighbour of watched) {
        const again = seen.find(({ identity }) => identity === neighbour.identity);
        if (again && !again.gone && this.#runs(again)) return again;
        if (again && !again.gone) next.push(neighbour);
        else this.#gone.set(neighbour.identity, neighbour.lastPollMs);
      }
      watched = next;
    }
    return undefined;
  }

  #runs({ identity, lastPollMs, beatMs }: Neighbour): boolean {
    const first = this.#firstSeen.get(identity);
    if (lastPollMs !== first?.lastPollMs || beatMs !== first.beatMs) return true;
    return lastPollMs >= this.#boundAt && Date.now() - lastPollMs <= this.#timing.aliveMs;
  }

  /** Logs each differing worker once. */
  warn(differing: Neighbour[], taskQueue: string): void {
    for (const neighbour of differing) {
      if (this.#warned.has(neighbour.identity)) continue;
      this.#warned.add(neighbour.identity);
      const polled = Math.round((Date.now() - neighbour.lastPollMs) / 1000);
      this.#log(
        `Task queue "${taskQueue}" has another worker serving ${describeDifference(this.#signature, neighbour.signature)}: ${neighbour.identity}, last polled ${polled} s ago (this worker: ${this.#identity}). Temporal hands each task to any worker of the queue; give each agent its own task queue. A worker that stopped is ignored once it says it shut down or misses its heartbeats (on a server without worker heartbeats: once it has not polled for ${this.#timing.goneMs / 1000} s).`,
      );
    }
  }

  #cachedLook(
    service: TaskQueueService & WorkerListService,
    namespace: string,
    taskQueue: string,
    now: number,
  ): Promise<Neighbour[]> {
    if (!this.#looked || now - this.#looked.at > LOOK_INTERVAL_MS) {
      this.#looked = { at: now, neighbours: this.#look(service, namespace, taskQueue, now) };
    }
    return this.#looked.neighbours;
  }

  async #look(
    service: TaskQueueService & WorkerListService,
    namespace: string,
    taskQueue: string,
    now: number,
  ): Promise<Neighbour[]> {
    const neighbours: Neighbour[] = [];
    const states = await pollerStates(service, namespace, taskQueue, TASK_QUEUE_TYPE_ACTIVITY, {
      now,
      pollerGoneMs: this.#timing.goneMs,
    });
    for (const { identity, lastPollMs, beat, gone } of states) {
      if (identity === this.#identity) continue;
      const signature = signatureOf(identity);
      if (!signature) continue;
      const beatMs = beat?.beatMs;
      if (!this.#firstSeen.has(identity)) this.#firstSeen.set(identity, { lastPollMs, beatMs });
      neighbours.push({ identity, signature, lastPollMs, ...(beatMs === undefined ? {} : { beatMs }), gone });
    }
    return neighbours;
  }
}

function describeDifference(own: WorkerSignature | undefined, other: WorkerSignature): string {
  if (other.model && own?.model && other.model !== own.model) return 'another model';
  return 'another set of tools';
}

/**
 * A model call must not be answered by a worker that calls another model than the other workers of
 * its queue, nor without tools the conversation offers: the conversation would silently get
 * another agent's answer. Neither is fixed by a retry.
 */
export async function refuseCrossedQueue(
  deps: { registry: ToolRegistry; neighbours?: TaskQueueNeighbours; log?: (message: string) => void },
  offered: string[] | undefined,
): Promise<void> {
  const context = Context.current();
  const { info } = context;
  // Seeing whether another worker still runs may take up to a long poll: the call heartbeats meanwhile.
  const stopBeating = heartbeatWhileRunning(context);
  const conflict = await deps.neighbours
    ?.modelConflict(context.client.workflowService, info.activityNamespace, info.taskQueue)
    .finally(stopBeating);
  if (conflict) {
    (deps.log ?? console.warn)(conflict);
    throw ApplicationFailure.create({ message: conflict, type: 'TaskQueueShared', nonRetryable: true });
  }
  if (!offered) return;
  await deps.registry.refresh();
  const missing = offered.filter(
    (name) => !deps.registry.has(name) && !deps.registry.unavailableReason(name),
  );
  if (missing.length === 0) return;
  const worker = deps.neighbours?.identity ?? 'this worker';
  const message = `Worker ${worker} on task queue "${info.taskQueue}" does not have ${missing.map((name) => `"${name}"`).join(', ')}, offered by this conversation (it has: ${deps.registry.names().join(', ') || 'no tools'}). Is a worker of another agent on this queue? Give each agent its own task queue.`;
  (deps.log ?? console.warn)(message);
  throw ApplicationFailure.create({ message, type: 'ToolNotOnWorker', nonRetryable: true });
}
