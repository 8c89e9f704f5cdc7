import { setTimeout as delay } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { eventsQuery } from '../contract/definitions.ts';
import type { EventLogPage, LiveEntry } from '../contract/protocol.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationEvent, ConversationEventItem } from '../contract/types/events.ts';
import { announcesLiveChannel, LiveChannel, type LiveReader } from '../infrastructure/storage/liveChannel.ts';
import { payloadStoreOf } from '../infrastructure/storage/payloadStorage.ts';
import { announcementOf, describeStore, isStore } from '../infrastructure/storage/payloadStoreIdentity.ts';
import { PAYLOAD_STORE_ERROR } from '../infrastructure/storage/storeErrors.ts';
import { recentPollers, TASK_QUEUE_TYPE_WORKFLOW } from '../infrastructure/taskQueuePollers.ts';

/** A later event waits this long for an earlier one before the follower asks the log for it. */
const GAP_WAIT_MS = 500;
/** After this long with nothing new, the follower asks Temporal whether the conversation still runs. */
const QUIET_CHECK_MS = 2_000;

/**
 * The live channel a follower of `handle` reads, when it can: this client's payload store keeps one
 * (the file store, or the S3 store unless `YIEM_S3_LIVE_CHANNEL=0`), and every yiem worker polling the conversation's task queue announces the same store and
 * that it copies events there. Undefined otherwise: the follower polls the log by Update.
 */
export async function liveChannelFor(handle: WorkflowHandle): Promise<FollowedChannel | undefined> {
  const { options, workflowService } = handle.client;
  const channel = LiveChannel.of(options.loadedDataConverter);
  const own = channel && (await payloadStoreOf(options.dataConverter?.externalStorage));
  if (!channel || !own) return undefined;
  const { taskQueue } = await handle.describe();
  const identities = await recentPollers(
    workflowService,
    options.namespace,
    taskQueue,
    TASK_QUEUE_TYPE_WORKFLOW,
  );
  const workers = identities
    .map((identity) => ({ identity, ...announcementOf(identity) }))
    .filter((worker) => worker.announced);
  const copying = workers.every(
    (worker) => announcesLiveChannel(worker.identity) && isStore(worker.store, own),
  );
  return workers.length > 0 && copying ? { channel, store: describeStore(own) } : undefined;
}

/** A live channel to follow on, and its payload store in words, for the errors that name it. */
export interface FollowedChannel {
  channel: LiveChannel;
  store: string;
}

/**
 * How long a follower goes on through a payload store outage, reading the log by query meanwhile
 * (each a billed Query), before it gives up with an error naming the store.
 */
const STORE_OUTAGE_FOLLOW_MS = 120_000;
/** While the store is down, each read is a query of the log: one a second. */
const STORE_DOWN_READ_MS = 1_000;

/** Why a follower stopped: its channel's payload store, and what went wrong there. */
function liveStoreError(store: string, cause: unknown, since?: number): Error {
  const down = since === undefined ? '' : ` for ${Math.round((Date.now() - since) / 1000)} s`;
  const error = new Error(
    `The live channel of payload store ${store} could not be read${down}: ${describeThrown(cause)}`,
    { cause },
  );
  error.name = PAYLOAD_STORE_ERROR;
  return error;
}

/**
 * Follows a conversation's events on its live channel: catches up from the log with one query, then
 * reads what workers copy to the channel, and asks the log again only for a gap. Ends when the
 * conversation does or `signal` aborts. `order` knows what this follower has shown: a follower that
 * attaches again after an outage passes the same one, so the logged copy of a call it saw in
 * previews (its result delivered once Temporal was back) is not shown a second time.
 */
export async function* followLiveChannel(
  handle: WorkflowHandle,
  followed: FollowedChannel,
  order: LiveEventOrder,
  signal: AbortSignal | undefined,
): AsyncGenerator<ConversationEventItem, void, undefined> {
  const catchUp = async (): Promise<void> => {
    for (;;) {
      const page: EventLogPage = await handle.query(eventsQuery, order.next);
      order.addPage(page);
      if (page.items.length === 0) return;
    }
  };
  const reader = new ChannelReading(handle, followed, catchUp);
  try {
    // Attached before the catch-up, so that nothing written meanwhile is missed.
    await reader.attach();
    await catchUp();
    yield* order.take();
    let quietSince = Date.now();
    let lastEntryAt = quietSince;
    let historyLength: number | undefined;
    const intervals = followed.channel.readIntervals;
    while (!signal?.aborted) {
      const entries = await reader.read();
      order.add(entries);
      yield* order.take();
      const now = Date.now();
      if (order.waitingSince(now) > GAP_WAIT_MS) await catchUp();
      if (entries.length > 0) {
        quietSince = now;
        lastEntryAt = now;
        historyLength = undefined;
      } else if (now - quietSince > QUIET_CHECK_MS) {
        quietSince = now;
        const description = await handle.describe();
        // History grew with nothing copied here: something was not copied (a worker that cannot write).
        if (historyLength !== undefined && description.historyLength !== historyLength) {
          await catchUp();
          lastEntryAt = now;
        }
        historyLength = description.historyLength;
        if (description.status.name !== 'RUNNING') {
          order.add(await reader.read());
          yield* order.take();
          return;
        }
      }
      yield* order.take();
      const interval = reader.storeDown
        ? STORE_DOWN_READ_MS
        : now - lastEntryAt > intervals.idleAfter
          ? intervals.idle
          : intervals.active;
      await delay(interval, undefined, signal ? { signal } : {}).catch(() => undefined);
    }
  } finally {
    await reader.close();
  }
}

/**
 * A follower's reading of the live channel through a payload store outage: while the store cannot
 * be attached to or read, each read catches up from the log by query instead (Temporal still
 * answers, and the order keeps each event once), and the reader attaches once the store is back.
 * A store down past `STORE_OUTAGE_FOLLOW_MS` ends the follow with an error naming it.
 */
class ChannelReading {
  readonly #handle: WorkflowHandle;
  readonly #followed: FollowedChannel;
  readonly #catchUp: () => Promise<void>;
  #reader: LiveReader | undefined;
  #downSince: number | undefined;

  constructor(handle: WorkflowHandle, followed: FollowedChannel, catchUp: () => Promise<void>) {
    this.#handle = handle;
    this.#followed = followed;
    this.#catchUp = catchUp;
  }

  /** Says this follower is present; a store that cannot be reached now is tried again on each read. */
  async attach(): Promise<void> {
    try {
      this.#reader = await this.#followed.channel.attach(
        this.#handle.client.options.namespace,
        this.#handle.workflowId,
      );
    } catch (error) {
      this.#storeDown(error);
    }
  }

  /** What workers wrote since the last read; nothing while the store is down (the log caught up instead). */
  async read(): Promise<LiveEntry[]> {
    if (!this.#reader) {
      await this.attach();
      // Still down, or attached late: what was logged meanwhile comes from the log.
      await this.#catchUp();
      if (!this.#reader) return [];
    }
    try {
      const entries = await this.#reader.read();
      this.#downSince = undefined;
      return entries;
    } catch (error) {
      this.#storeDown(error);
      await this.#catchUp();
      return [];
    }
  }

  async close(): Promise<void> {
    await this.#reader?.close();
  }

  /** Whether the store could not be reached at the last attach or read. */
  get storeDown(): boolean {
    return this.#downSince !== undefined;
  }

  #storeDown(error: unknown): void {
    this.#downSince ??= Date.now();
    if (Date.now() - this.#downSince > STORE_OUTAGE_FOLLOW_MS) {
      throw liveStoreError(this.#followed.store, error, this.#downSince);
    }
  }
}

/** What a follower showed of one attempt's previews, for its logged copies to be known again. */
interface PreviewShown {
  turn: number;
  attempt: number;
  /** Shown events whose logged copy has not come yet: type and tool call. */
  events: { type: string; toolCallId?: string | undefined }[];
  /** Text shown and not yet matched by a logged copy. */
  text: string;
  /** The last preview index shown. */
  index: number;
}

/**
 * Puts what a follower reads from the log and the live channel in the log's order, each event once:
 * logged events by offset; a running call's `preview` events at once, and then their logged copies
 * (under the same origin) not again. A call's text comes to the log whole: only what its previews
 * had not shown is yielded. An origin's previews count from its first event: a call shows itself
 * again from there when a follower comes, and those who read it already skip what they have.
 * Logged events read by query (a catch-up, after an outage) carry no origin: one that matches a
 * shown preview of the same turn and attempt (its type and tool call, or its text) is that copy.
 */
export class LiveEventOrder {
  #next: number;
  readonly #logged = new Map<number, { event: ConversationEvent; origin?: string | undefined }>();
  /** Per origin: what its previews showed; null: not shown (its first event came before this follower). */
  readonly #previewed = new Map<string, PreviewShown | null>();
  #ready: ConversationEventItem[] = [];
  /** Previews of calls scheduled after log events not read yet, in the order they came. */
  #early: Extract<LiveEntry, { kind: 'preview' }>[] = [];
  #waitingSince: number | undefined;

  constructor(fromOffset: number) {
    this.#next = fromOffset;
  }

  get next(): number {
    return this.#next;
  }

  addPage(page: EventLogPage): void {
    for (const { offset, event } of page.items) this.#log(offset, event);
    // The log no longer holds what was asked for: it goes on from its oldest event, as a poll does.
    const first = page.items[0]?.offset;
    if (first !== undefined && first > this.#next) this.#next = first;
    this.#release();
  }

  add(entries: LiveEntry[]): void {
    for (const entry of entries) {
      if (entry.kind === 'logged') this.#log(entry.offset, entry.event, entry.origin);
      else this.#early.push(entry);
    }
    this.#release();
  }

  /** The events ready in order since the last call. */
  take(): ConversationEventItem[] {
    return this.#ready.splice(0);
  }

  /** How long a later event has waited for the next one (0: none waits). */
  waitingSince(now: number): number {
    if (this.#logged.size === 0) this.#waitingSince = undefined;
    else this.#waitingSince ??= now;
    return this.#waitingSince === undefined ? 0 : now - this.#waitingSince;
  }

  #log(offset: number, event: ConversationEvent, origin?: string): void {
    if (offset >= this.#next) this.#logged.set(offset, { event, origin });
  }

  #preview({ origin, index, event }: Extract<LiveEntry, { kind: 'preview' }>): void {
    let shown = this.#previewed.get(origin);
    if (shown === undefined) {
      shown =
        index === 0 ? { turn: event.turn, attempt: event.attempt, events: [], text: '', index: -1 } : null;
      this.#previewed.set(origin, shown);
    }
    // An attempt shows itself again from its first event when a follower comes.
    if (!shown || index <= shown.index) return;
    shown.index = index;
    if (event.type === 'textDelta') shown.text += event.text;
    else shown.events.push({ type: event.type, toolCallId: toolCallOf(event) });
    this.#ready.push({ ...event, offset: this.#next - 1, live: true });
  }

  #release(): void {
    this.#releasePreviews();
    for (let entry = this.#logged.get(this.#next); entry; entry = this.#logged.get(this.#next)) {
      this.#logged.delete(this.#next);
      const event = this.#unshown(entry.event, entry.origin);
      if (event) this.#ready.push({ ...event, offset: this.#next });
      if (entry.event.type === 'turnEnd') this.#forgetPreviews(entry.event.turn);
      this.#next += 1;
      this.#waitingSince = undefined;
      this.#releasePreviews();
    }
  }

  /**
   * A turn's logged copies all come before its end: what its previews showed matches nothing more
   * (kept as not shown, so a late preview of the finished call is not shown either).
   */
  #forgetPreviews(turn: number): void {
    for (const [origin, shown] of this.#previewed) {
      if (shown && shown.turn <= turn) this.#previewed.set(origin, null);
    }
  }

  /** Shows the previews whose call was scheduled before the next logged event, in the order they came. */
  #releasePreviews(): void {
    let shown = 0;
    for (const preview of this.#early) {
      if (preview.after > this.#next) break;
      this.#preview(preview);
      shown += 1;
    }
    this.#early.splice(0, shown);
  }

  /** What of a logged event its origin's previews have not shown: all of it, none, or the rest of a text. */
  #unshown(event: ConversationEvent, origin: string | undefined): ConversationEvent | undefined {
    const shown = origin === undefined ? this.#previewOf(event) : this.#previewed.get(origin);
    if (!shown) return event;
    if (event.type === 'textDelta') {
      // The log has the text whole (from the result) or in the deltas the previews showed.
      if (shown.text.startsWith(event.text)) {
        shown.text = shown.text.slice(event.text.length);
        return undefined;
      }
      if (!event.text.startsWith(shown.text)) return event;
      const rest = event.text.slice(shown.text.length);
      shown.text = '';
      return { ...event, text: rest };
    }
    const at = shown.events.findIndex((seen) => matches(seen, event));
    if (at < 0) return event;
    shown.events.splice(at, 1);
    return undefined;
  }

  /**
   * The shown previews an origin-less logged event is a copy of, if any: same turn and attempt, and a
   * match; the latest such call first (a model call's events name no call, and calls of a turn run
   * one after another, but for parallel tools, whose events name theirs).
   */
  #previewOf(event: ConversationEvent): PreviewShown | undefined {
    for (const shown of [...this.#previewed.values()].reverse()) {
      if (!shown || shown.turn !== event.turn || shown.attempt !== event.attempt) continue;
      const copy =
        event.type === 'textDelta'
          ? shown.text !== '' && (shown.text.startsWith(event.text) || event.text.startsWith(shown.text))
          : shown.events.some((seen) => matches(seen, event));
      if (copy) return shown;
    }
    return undefined;
  }
}

/** The tool call an event is about, if it is about one. */
function toolCallOf(event: ConversationEvent): string | undefined {
  return 'toolCallId' in event && typeof event.toolCallId === 'string' ? event.toolCallId : undefined;
}

/** Whether a logged event is the copy of a shown preview: its type, and its tool call if it has one. */
function matches(seen: { type: string; toolCallId?: string | undefined }, event: ConversationEvent): boolean {
  return seen.type === event.type && seen.toolCallId === toolCallOf(event);
}
