import { setTimeout as delay } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { eventsQuery } from '../contract/definitions.ts';
import type { EventLogPage, LiveEntry } from '../contract/protocol.ts';
import type { ConversationEvent, ConversationEventItem } from '../contract/types/events.ts';
import { announcesLiveChannel, LiveChannel } from '../infrastructure/storage/liveChannel.ts';
import { payloadStoreOf } from '../infrastructure/storage/payloadStorage.ts';
import { announcementOf } from '../infrastructure/storage/payloadStoreIdentity.ts';
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
export async function liveChannelFor(handle: WorkflowHandle): Promise<LiveChannel | undefined> {
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
    (worker) => announcesLiveChannel(worker.identity) && worker.store?.id === own.id,
  );
  return workers.length > 0 && copying ? channel : undefined;
}

/**
 * Follows a conversation's events on its live channel: catches up from the log with one query, then
 * reads what workers copy to the channel, and asks the log again only for a gap. Ends when the
 * conversation does or `signal` aborts.
 */
export async function* followLiveChannel(
  handle: WorkflowHandle,
  channel: LiveChannel,
  fromOffset: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<ConversationEventItem, void, undefined> {
  const reader = await channel.attach(handle.client.options.namespace, handle.workflowId);
  const order = new LiveEventOrder(fromOffset);
  const catchUp = async (): Promise<void> => {
    for (;;) {
      const page: EventLogPage = await handle.query(eventsQuery, order.next);
      order.addPage(page);
      if (page.items.length === 0) return;
    }
  };
  try {
    await catchUp();
    yield* order.take();
    let quietSince = Date.now();
    let lastEntryAt = quietSince;
    let historyLength: number | undefined;
    const intervals = channel.readIntervals;
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
      const interval = now - lastEntryAt > intervals.idleAfter ? intervals.idle : intervals.active;
      await delay(interval, undefined, signal ? { signal } : {}).catch(() => undefined);
    }
  } finally {
    await reader.close();
  }
}

/**
 * Puts what a follower reads from the log and the live channel in the log's order, each event once:
 * logged events by offset; a running call's `preview` events at once, and then their logged copies
 * (under the same origin) not again. A call's text comes to the log whole: only what its previews
 * had not shown is yielded. An origin's previews count from its first event: a call shows itself
 * again from there when a follower comes, and those who read it already skip what they have.
 */
export class LiveEventOrder {
  #next: number;
  readonly #logged = new Map<number, { event: ConversationEvent; origin?: string | undefined }>();
  /**
   * Per origin: how many events of each type were shown, the text shown and the last one's index;
   * null: not shown (its first event came before this follower).
   */
  readonly #previewed = new Map<
    string,
    { counts: Map<string, number>; text: string; index: number } | null
  >();
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
      shown = index === 0 ? { counts: new Map(), text: '', index: -1 } : null;
      this.#previewed.set(origin, shown);
    }
    // An attempt shows itself again from its first event when a follower comes.
    if (!shown || index <= shown.index) return;
    shown.index = index;
    if (event.type === 'textDelta') shown.text += event.text;
    else shown.counts.set(event.type, (shown.counts.get(event.type) ?? 0) + 1);
    this.#ready.push({ ...event, offset: this.#next - 1, live: true });
  }

  #release(): void {
    this.#releasePreviews();
    for (let entry = this.#logged.get(this.#next); entry; entry = this.#logged.get(this.#next)) {
      this.#logged.delete(this.#next);
      const event = this.#unshown(entry.event, entry.origin);
      if (event) this.#ready.push({ ...event, offset: this.#next });
      this.#next += 1;
      this.#waitingSince = undefined;
      this.#releasePreviews();
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
    const shown = origin === undefined ? undefined : this.#previewed.get(origin);
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
    const count = shown.counts.get(event.type) ?? 0;
    if (count === 0) return event;
    shown.counts.set(event.type, count - 1);
    return undefined;
  }
}
