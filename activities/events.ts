import { Context } from '@temporalio/activity';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { workflowStreamPollUpdate } from '@temporalio/workflow-streams/workflow';
import { LRUCache } from 'lru-cache';
import { MAX_HELD_BACK_EVENT_BYTES } from '../src/contract/limits.ts';
import {
  type ActivityEvents,
  type ConversationEventBody,
  EVENTS_TOPIC,
  type LiveEntry,
} from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import type { ConversationEvent } from '../src/contract/types/events.ts';
import { LiveChannel } from '../src/infrastructure/storage/liveChannel.ts';

/** How often buffered events travel to the workflow: one signal per interval, whatever the token rate. */
const BATCH_INTERVAL = '250 milliseconds';
/** A batch that cannot reach the workflow for this long is dropped: events never fail the activity. */
const MAX_RETRY_DURATION = '20 seconds';
/**
 * A followed attempt still running after this long sends its events live. Each signal costs the workflow a
 * workflow task and history events, so attempts shorter than this (most tool calls, many model
 * calls) hand their events over with their result instead; a follower sees them when the result
 * arrives, at most this much later than it would have live. Streamed text is the exception: a
 * follower reads along, so a followed model call goes live with its first batch of text.
 */
const LIVE_AFTER_MS = 500;
/**
 * With nobody following, an attempt's events travel with its result: sent live, each batch would be a
 * signal (a billed Action) nobody reads. So that a follower who attaches during a long call still
 * reads along, at most this late, the attempt looks this often among the history's last events for
 * a follower's poll accepted since the call was scheduled and still waiting: a read, not a billed
 * Action. An attempt that went live unfollowed (its held-back events outgrew the result) keeps its
 * batches of this interval even then; only what it sends at once is flushed at once.
 */
const FOLLOWER_CHECK_INTERVAL_MS = 5_000;
/** The history events read from the end for that: a poll waiting for news is among the last few. */
const FOLLOWER_CHECK_EVENTS = 20;
/** Held-back events that outgrew the result go live unfollowed, a batch per this interval. */
const UNFOLLOWED_INTERVAL_MS = 5_000;
/**
 * How often an attempt looks for a follower of the live channel (a folder listing, no Temporal
 * call), and gathers events for it: a batch of events is one file.
 */
const LIVE_CHANNEL_INTERVAL_MS = 250;

/**
 * The events of local-activity attempts that failed and will run again, by conversation and call
 * key, for the next attempt to carry in its result: it runs in this process, inside the same
 * workflow task, and a signal sent now would reach the log only after the task completes, after the
 * call's result. The bound only matters for attempts whose next one never comes (its worker moved,
 * the turn ended).
 */
const carriedToNextAttempt = new LRUCache<string, ConversationEvent[]>({ max: 1_000 });

/** The live channel of each worker client's data converter (undefined: its store has none). */
const liveChannels = new WeakMap<object, LiveChannel | undefined>();

function liveChannelOf(context: Context): LiveChannel | undefined {
  const converter = context.client.options.loadedDataConverter;
  if (!liveChannels.has(converter)) liveChannels.set(converter, LiveChannel.of(converter));
  return liveChannels.get(converter);
}

/** How one event is published: see {@link ActivityEventPublisher.publish}. */
export interface PublishOptions {
  now?: boolean;
  live?: boolean;
  inReply?: boolean;
}

/** Publishes one activity attempt's events to its conversation's event log. */
export interface ActivityEventPublisher {
  /** Whether followers read this attempt's events on the live channel only: an event sent costs no Action. */
  readonly onLiveChannel: boolean;
  /**
   * `now` sends a live event without waiting for the batch interval. `live` is `now` that also makes
   * a followed attempt go live for the event: a follower reads along with streamed text, so holding
   * it back for the result would show a model's first words half a second late. `inReply` marks an
   * event the result carries as a placeholder (a model call's text, which its reply holds): it costs
   * the result nothing, so it never makes the attempt go live by size.
   */
  publish(event: ConversationEventBody, options?: PublishOptions): void;
  /**
   * The attempt succeeded: sends what is buffered and returns the events held back for the result
   * (none once the attempt went live). Call before returning, so events precede the result.
   */
  finish(): Promise<ActivityEvents>;
  /**
   * The attempt failed: sends every event, so followers see how far it got before the retry; a
   * local activity's attempt that is `retrying` hands them to the next attempt instead.
   */
  abandon(options?: { retrying?: boolean }): Promise<void>;
}

/**
 * A publisher for the current activity attempt: events carry its turn and attempt and a sequence
 * number starting at 0, so a retried attempt visibly starts over. `scheduled.followed` says whether
 * anyone polled the log when the call was scheduled; if not, events travel with the result unless
 * a follower attaches while the attempt runs. Followers of the live channel read the attempt's
 * events there as it runs (after the log's events before `scheduled.eventOffset`), and the log
 * takes them with its result. A local activity's attempt (`localCallKey`, the
 * workflow's key for the call) never goes live: its signals would reach the log after its result,
 * since the workflow task that waits for it is open; its events travel with its result, behind
 * those of its failed attempts before it.
 */
export function activityEventPublisher(
  turn: number,
  warn: (message: string) => void,
  scheduled: { followed?: boolean | undefined; eventOffset?: number | undefined },
  localCallKey?: string,
): ActivityEventPublisher {
  return new AttemptEvents(turn, warn, scheduled, localCallKey);
}

type LivePreview = NonNullable<ReturnType<typeof livePreview>>;

/** One attempt's events: held back for its result until it goes live (see `activityEventPublisher`). */
class AttemptEvents implements ActivityEventPublisher {
  readonly #context = Context.current();
  readonly #turn: number;
  readonly #warn: (message: string) => void;
  readonly #workflowId: string;
  readonly #local: boolean;
  #following: boolean;
  // Created when the attempt goes live: an attempt whose events travel in its result needs none.
  #stream: WorkflowStreamClient | undefined;
  /** Keyed by conversation too: call keys are only unique within one. */
  readonly #carryKey: string | undefined;
  readonly #heldBack: ConversationEvent[];
  #heldBackBytes: number;
  #live = false;
  #seq = 0;
  #liveTimer: ReturnType<typeof setTimeout> | undefined;
  #followerCheck: ReturnType<typeof setInterval> | undefined;
  #ended = false;
  readonly #preview: LivePreview | undefined;

  constructor(
    turn: number,
    warn: (message: string) => void,
    scheduled: { followed?: boolean | undefined; eventOffset?: number | undefined },
    localCallKey: string | undefined,
  ) {
    const { workflowExecution } = this.#context.info;
    if (!workflowExecution)
      throw new Error('Conversation events come only from activities of a conversation');
    this.#turn = turn;
    this.#warn = warn;
    this.#workflowId = workflowExecution.workflowId;
    this.#local = localCallKey !== undefined;
    this.#following = scheduled.followed !== false && !this.#local;
    this.#carryKey = this.#local ? `${this.#workflowId}/${localCallKey}` : undefined;
    this.#heldBack = this.#carryKey ? takeCarried(this.#carryKey) : [];
    this.#heldBackBytes = this.#heldBack.reduce((bytes, event) => bytes + eventBytes(event), 0);
    this.#preview = livePreview(this.#context, scheduled.eventOffset ?? 0, warn);
    this.#preview?.start(() => this.#heldBack);
    if (this.#following) this.#liveTimer = setTimeout(() => this.#goLive(), LIVE_AFTER_MS);
    else if (!this.#local) this.#watchForFollower();
  }

  get onLiveChannel(): boolean {
    return this.#preview?.previewing === true && !this.#live;
  }

  publish(event: ConversationEventBody, options?: PublishOptions): void {
    const full = {
      ...event,
      turn: this.#turn,
      attempt: this.#context.info.attempt,
      seq: this.#seq++,
    } as ConversationEvent;
    const awaited = options?.live === true;
    if (this.#live) {
      this.#liveTopic().publish(full, { forceFlush: this.#following && (awaited || options?.now === true) });
      return;
    }
    this.#heldBack.push(full);
    // A flood of streamed text sent live instead would cross the workflow by signal, megabytes a
    // batch, and then again in the reply: that stalled the worker's other conversations.
    if (options?.inReply !== true) this.#heldBackBytes += eventBytes(full);
    if (this.#heldBackBytes > MAX_HELD_BACK_EVENT_BYTES) this.#goLive();
    else if (this.#preview?.previewing)
      this.#preview.add(full, this.#heldBack.length - 1, awaited || options?.now === true);
    else if (this.#following && awaited) this.#goLive();
  }

  async finish(): Promise<ActivityEvents> {
    this.#stopTimers();
    const preview = this.#preview;
    await preview?.flush();
    if (!this.#live)
      return preview?.previewing
        ? withOrigin(this.#heldBack.splice(0), preview.origin)
        : this.#heldBack.splice(0);
    await this.#send();
    return [];
  }

  async abandon(options?: { retrying?: boolean }): Promise<void> {
    this.#stopTimers();
    if (this.#carryKey && !this.#live && options?.retrying) {
      carriedToNextAttempt.set(this.#carryKey, this.#heldBack.splice(0));
      return;
    }
    this.#goLive();
    await this.#send();
  }

  #liveTopic() {
    this.#stream ??= WorkflowStreamClient.create(this.#context.client, this.#workflowId, {
      batchInterval: this.#following ? BATCH_INTERVAL : UNFOLLOWED_INTERVAL_MS,
      maxRetryDuration: MAX_RETRY_DURATION,
    });
    return this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
  }

  #goLive(): void {
    if (this.#live) return;
    this.#live = true;
    clearTimeout(this.#liveTimer);
    // Live but unfollowed (the held-back events outgrew the result), the check goes on for a follower.
    if (this.#following) clearInterval(this.#followerCheck);
    const topic = this.#liveTopic();
    // Followers of the live channel read these already: the origin lets them know them again.
    const origin = this.#preview?.previewing ? this.#preview.origin : undefined;
    this.#heldBack.splice(0).forEach((event, index, all) => {
      topic.publish(origin ? Object.assign({}, event, { origin }) : event, {
        forceFlush: index === all.length - 1,
      });
    });
  }

  /** Unfollowed when scheduled: looks now and then for a follower who came since, to go live for them. */
  #watchForFollower(): void {
    const scheduledAt = this.#context.info.scheduledTimestampMs;
    let checking = false;
    let checkFailed = false;
    this.#followerCheck = setInterval(() => {
      if (checking) return;
      checking = true;
      followerWaitingSince(this.#context, scheduledAt)
        .then((attached) => {
          if (!attached || this.#following || this.#ended) return;
          // An attempt already live keeps its stream's unfollowed batches; what it sends at once
          // (a tool's start, streamed text) is flushed at once from now on.
          this.#following = true;
          clearInterval(this.#followerCheck);
          this.#goLive();
        })
        // A check that fails costs a follower only the wait for the next one or for the result.
        .catch((error) => {
          if (checkFailed) return;
          checkFailed = true;
          this.#warn(`Could not look for followers of this call's events: ${describeThrown(error)}`);
        })
        .finally(() => {
          checking = false;
        });
    }, FOLLOWER_CHECK_INTERVAL_MS);
  }

  #stopTimers(): void {
    this.#ended = true;
    clearTimeout(this.#liveTimer);
    clearInterval(this.#followerCheck);
    this.#preview?.stop();
  }

  async #send(): Promise<void> {
    try {
      await this.#stream?.[Symbol.asyncDispose]();
    } catch (error) {
      this.#warn(`Could not publish conversation events: ${describeThrown(error)}`);
    }
  }
}

/** `events` with `origin` on the first: followers of the live channel read them before, under that name. */
function withOrigin(events: ConversationEvent[], origin: string): ActivityEvents {
  const [first, ...rest] = events;
  return first ? [{ ...first, origin }, ...rest] : [];
}

/**
 * An attempt's events for the followers of the live channel, while it runs. It looks for followers
 * at once and then every `LIVE_CHANNEL_INTERVAL_MS`; when one comes, it writes every event of the
 * attempt from its first on, as `preview` entries, and then each new one, a batch per interval or at
 * once for what a reader waits for (streamed text). The events still travel in the result: the log
 * keeps them.
 */
function livePreview(context: Context, after: number, warn: (message: string) => void) {
  const channel = liveChannelOf(context);
  const { workflowExecution, namespace, activityId, attempt } = context.info;
  if (!channel || !workflowExecution) return undefined;
  const { workflowId } = workflowExecution;
  // Activity ids start again in each run: with the run id, a call of a run after continue-as-new is
  // never taken for the call of the same id in the run before, whose previews a follower has seen.
  const origin = `${workflowExecution.runId}/${activityId}/${attempt}`;
  let previewing = false;
  const pending: LiveEntry[] = [];
  const entry = (event: ConversationEvent, index: number): LiveEntry => ({
    kind: 'preview',
    origin,
    index,
    event,
    after,
  });
  let writing: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setInterval> | undefined;
  let failed = false;
  const write = (): Promise<void> => {
    const entries = pending.splice(0);
    if (entries.length > 0) {
      writing = writing
        .then(() => channel.append(namespace, workflowId, entries))
        .catch((error) => {
          if (failed) return;
          failed = true;
          warn(`Could not write this call's events to the live channel: ${describeThrown(error)}`);
        });
    }
    return writing;
  };
  return {
    origin,
    get previewing() {
      return previewing;
    },
    start(heldBack: () => ConversationEvent[]) {
      const known = new Set<string>();
      let looking = false;
      const look = () => {
        if (looking) return;
        looking = true;
        channel
          .followers(namespace, workflowId)
          .then((followers) => {
            if (timer === undefined) return;
            // A follower who came since shows the attempt from its first event: those who read it
            // already skip what they have.
            if (followers.some((follower) => !known.has(follower))) {
              pending.splice(0, pending.length, ...heldBack().map((event, index) => entry(event, index)));
              previewing = true;
            }
            for (const follower of followers) known.add(follower);
            if (previewing) void write();
          })
          .catch(() => undefined)
          .finally(() => {
            looking = false;
          });
      };
      timer = setInterval(look, LIVE_CHANNEL_INTERVAL_MS);
      look();
    },
    add(event: ConversationEvent, index: number, now: boolean) {
      pending.push(entry(event, index));
      if (now) void write();
    },
    flush: write,
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** What an event adds to a result that carries it, as `MAX_HELD_BACK_EVENT_BYTES` counts. */
function eventBytes(event: ConversationEvent): number {
  return JSON.stringify(event).length;
}

/** What the failed attempts of a local call left for the next one (the oldest first). */
function takeCarried(carryKey: string): ConversationEvent[] {
  const carried = carriedToNextAttempt.get(carryKey) ?? [];
  carriedToNextAttempt.delete(carryKey);
  return carried;
}

/**
 * Whether a follower's poll that reached the conversation at or after `sinceMs` (server time, as the
 * activity's scheduled time is) still waits: its Update's acceptance is among the history's last
 * events while it waits for news, and a poll that has returned has its completion there too.
 */
async function followerWaitingSince(context: Context, sinceMs: number): Promise<boolean> {
  const { workflowExecution, namespace } = context.info;
  const { connection, workflowService } = context.client;
  const page = await connection.withDeadline(Date.now() + FOLLOWER_CHECK_INTERVAL_MS, () =>
    workflowService.getWorkflowExecutionHistoryReverse({
      namespace,
      execution: workflowExecution,
      maximumPageSize: FOLLOWER_CHECK_EVENTS,
    }),
  );
  const events = page.history?.events ?? [];
  const returned = new Set(
    events.map((event) => event.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId),
  );
  return events.some((event) => {
    const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    return (
      request?.input?.name === workflowStreamPollUpdate.name &&
      !returned.has(request.meta?.updateId) &&
      (optionalTsToMs(event.eventTime) ?? 0) >= sinceMs
    );
  });
}
