import {
  ApplicationFailure,
  defaultPayloadConverter,
  type Payload,
  patched,
  setHandler,
} from '@temporalio/workflow';
import {
  type PollInput,
  type PollResult,
  WorkflowStream,
  type WorkflowTopicHandle,
  workflowStreamPollUpdate,
} from '@temporalio/workflow-streams/workflow';
import { eventsQuery } from '../src/contract/definitions.ts';
import {
  MAX_CARRIED_EVENT_BYTES,
  MAX_CARRIED_EVENTS,
  MAX_EVENT_LOG_BYTES,
  MAX_EVENT_PAGE_ITEMS,
  MAX_TEXT_DELTA_EVENT_CHARS,
} from '../src/contract/limits.ts';
import {
  type ActivityEvents,
  type ConversationEventBody,
  EVENTS_TOPIC,
  type EventLogCarryOver,
  type EventLogPage,
  type LiveEntry,
} from '../src/contract/protocol.ts';
import { toolEndText } from '../src/contract/toolResult.ts';
import { textPieces } from '../src/contract/truncate.ts';
import type { ConversationEvent } from '../src/contract/types/events.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import { metered } from './actionMeter.ts';
import { appendLiveEntries } from './eventSink.ts';

/**
 * A follower counts as present this long after its last poll returned: it polls again at once, but
 * the activity that the same workflow task schedules must already see it.
 */
const FOLLOWER_GRACE_MS = 10_000;

/**
 * The conversation's event log: a workflow stream that clients follow by polling Update. Long
 * activity attempts publish to it by signal, short ones in their result. Events the workflow
 * publishes itself cost no history of their own: they are rebuilt on replay.
 *
 * Each event the log takes is also handed to the worker (a sink: not again on replay), which copies
 * it to the conversation's live channel in the payload store while someone reads it there; such a
 * follower catches up with the `events` query and sends no Update.
 */
export class ConversationEvents {
  #stream: WorkflowStream;
  #topic: WorkflowTopicHandle<ConversationEvent>;
  #seq: number;
  #detached = false;
  #pollsWaiting = 0;
  #lastPollEndedAt: number;
  /** The encoded bytes of the live log's entries before offset `#measuredTo` (`trim`). */
  #loggedBytes = 0;
  #measuredTo = 0;
  /** The offset up to which the live channel has been handed the log's events. */
  #copiedTo: number;

  constructor(carried?: EventLogCarryOver) {
    this.#stream = new WorkflowStream(carried?.stream);
    this.#topic = this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
    this.#seq = carried?.seq ?? 0;
    this.#lastPollEndedAt = carried?.followedAt ?? Number.NEGATIVE_INFINITY;
    // The previous run handed over what it carries.
    this.#copiedTo = this.offset;
    this.#countFollowers();
    setHandler(eventsQuery, (fromOffset, maxItems) => this.#page(fromOffset, maxItems));
  }

  #page(fromOffset: number, maxItems = MAX_EVENT_PAGE_ITEMS): EventLogPage {
    const { log, baseOffset } = this.#stream as unknown as LiveLog;
    const from = Math.max(fromOffset, baseOffset);
    const upTo = Math.min(baseOffset + log.length, from + Math.max(1, maxItems));
    const items: EventLogPage['items'] = [];
    for (let offset = from; offset < upTo; offset++) {
      items.push({ offset, event: eventAt(log, offset - baseOffset) });
    }
    return { items, next: Math.max(upTo, fromOffset) };
  }

  /**
   * Hands the live channel what the log took since it was last handed anything: events that came by
   * signal (the stream library logs them itself) and then `entries`, which the log has just taken.
   */
  #copyToLiveChannel(entries: LiveEntry[]): void {
    const { log, baseOffset } = this.#stream as unknown as LiveLog;
    const first = entries[0]?.kind === 'logged' ? entries[0].offset : baseOffset + log.length;
    const unseen: LiveEntry[] = [];
    for (let offset = Math.max(this.#copiedTo, baseOffset); offset < first; offset++) {
      const { origin, ...event } = eventAt(log, offset - baseOffset) as ConversationEvent & {
        origin?: string;
      };
      unseen.push({
        kind: 'logged',
        offset,
        event: event as ConversationEvent,
        ...(origin ? { origin } : {}),
      });
    }
    this.#copiedTo = baseOffset + log.length;
    appendLiveEntries([...unseen, ...entries]);
  }

  /**
   * Wraps the stream's poll handler to know whether anyone follows. The library keeps its handler
   * private (`onPoll`, @temporalio/workflow-streams 1.23.0); test/integration/eventCost.test.ts fails
   * if that changes. The validator repeats the library's: no polls while draining for a new run.
   */
  #countFollowers(): void {
    const stream = this.#stream as unknown as { onPoll(input: PollInput): Promise<PollResult> };
    const onPoll = stream.onPoll.bind(this.#stream);
    setHandler(
      workflowStreamPollUpdate,
      metered(async (input: PollInput) => {
        this.#pollsWaiting += 1;
        try {
          return await onPoll(input);
        } finally {
          this.#pollsWaiting -= 1;
          this.#lastPollEndedAt = Date.now();
        }
      }),
      {
        validator: (_input: PollInput) => {
          if (this.#detached) {
            throw ApplicationFailure.create({
              message: 'Workflow is draining for continue-as-new',
              type: 'StreamDraining',
              nonRetryable: true,
            });
          }
        },
      },
    );
  }

  /** Whether a follower is polling, or polled a moment ago. */
  get followed(): boolean {
    return this.#pollsWaiting > 0 || Date.now() - this.#lastPollEndedAt < FOLLOWER_GRACE_MS;
  }

  /** The offset the next event will have: what the stream's own offset query answers. */
  get offset(): number {
    const { log, baseOffset } = this.#stream as unknown as LiveLog;
    return baseOffset + log.length;
  }

  publish(turn: number, body: ConversationEventBody): void {
    const offset = this.offset;
    const event = { ...body, turn, attempt: 1, seq: this.#seq++ } as ConversationEvent;
    this.#topic.publish(event);
    this.#copyToLiveChannel([{ kind: 'logged', offset, event }]);
  }

  /**
   * Publishes the events an activity attempt handed over with its result, with their own origin;
   * `messageText` becomes the deltas carrying the text of the attempt's message, and
   * `toolEndOfResult` the `toolEnd` whose text is the first line of the result's `toolResult`
   * content (`fromResult`).
   */
  publishFromResult(events: ActivityEvents, from: ResultTexts = {}): void {
    const origin = events[0]?.origin;
    const entries: LiveEntry[] = [];
    for (const event of fromResult(events, from)) {
      entries.push({ kind: 'logged', offset: this.offset, event, ...(origin ? { origin } : {}) });
      this.#topic.publish(event);
    }
    if (entries.length > 0) this.#copyToLiveChannel(entries);
  }

  /** Whether followers have been let go (they come back to the next run). */
  get detached(): boolean {
    return this.#detached;
  }

  /** Lets waiting followers go, so that the run can finish or continue as new. */
  detachFollowers(): void {
    this.#detached = true;
    this.#stream.detachPollers();
  }

  /**
   * Takes followers back after `detachFollowers`, when a turn must run in this run after all. The
   * stream has no way back from detaching, so it is rebuilt from its own state (which registers its
   * handlers anew); polls already let go have returned.
   */
  reattachFollowers(): void {
    this.#stream = new WorkflowStream(this.#stream.getState());
    this.#topic = this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
    this.#detached = false;
    this.#countFollowers();
  }

  /**
   * The log for the next run: offsets go on, and the latest events travel along, so that a follower
   * whose poll was bounced between runs (it may land a run or two later) still reads them. Older
   * events stay behind, so the new run's input stays small.
   */
  carryOver(): EventLogCarryOver {
    const state = this.#stream.getState();
    const keepFrom = Math.max(
      state.log.length - MAX_CARRIED_EVENTS,
      firstWithin(state.log, MAX_CARRIED_EVENT_BYTES),
    );
    return {
      stream: { ...state, log: state.log.slice(keepFrom), base_offset: state.base_offset + keepFrom },
      seq: this.#seq,
      ...(Number.isFinite(this.#lastPollEndedAt) ? { followedAt: this.#lastPollEndedAt } : {}),
    };
  }

  /**
   * Drops the oldest events once the log holds more than a megabyte, so a long run's memory does not
   * grow with its content. A follower that far behind is told its offset was truncated.
   */
  trim(): void {
    // `getState()` re-encodes every payload of the log (base64 wire form), which cost ~10 ms a turn at
    // 500 turns; the live log's payload sizes give the same answer without encoding. Entries never
    // change and only this method drops them, so only those published since the last trim are
    // measured (summing the whole log every turn cost ~0.3 ms a turn with a full log). The fields are
    // the library's own (@temporalio/workflow-streams 1.23.0, not exported); eventLog.test.ts fails
    // if they change.
    const live = this.#stream as unknown as LiveLog;
    const { log, baseOffset } = live;
    const end = baseOffset + log.length;
    for (let offset = Math.max(this.#measuredTo, baseOffset); offset < end; offset++) {
      this.#loggedBytes += encodedBytes(log[offset - baseOffset]);
    }
    this.#measuredTo = end;
    let keepFrom = 0;
    while (this.#loggedBytes > MAX_EVENT_LOG_BYTES && keepFrom < log.length) {
      this.#loggedBytes -= encodedBytes(log[keepFrom]);
      keepFrom += 1;
    }
    if (keepFrom > 0) this.#stream.truncate(baseOffset + keepFrom);
  }
}

/**
 * Since this patch a message's text longer than `MAX_TEXT_DELTA_EVENT_CHARS` enters the log in pieces
 * of that size, as streamed text does: a model call's text now travels in its result however long it
 * is, and one delta of megabytes would be an event no page or payload should carry. Histories before
 * it replay their one whole delta, so the offsets a follower read stay the same.
 */
const MESSAGE_TEXT_PIECES_PATCH = 'yiem-message-text-pieces';

/**
 * A result's events as the log takes them, without their origin: `messageText` becomes the text of
 * the attempt's message, and the events after it number on from its last piece; `toolEndOfResult`
 * becomes the `toolEnd` with the first line of the tool's result.
 */
function fromResult(events: ActivityEvents, from: ResultTexts): ConversationEvent[] {
  const messageText = from.messageText ?? '';
  let added = 0;
  return events.flatMap(({ origin: _origin, ...carried }): ConversationEvent[] => {
    if (carried.type === 'toolEndOfResult') {
      const { type: _type, ...end } = carried;
      const text = toolEndText(from.toolResult ?? []);
      return [{ ...end, type: 'toolEnd', text, seq: end.seq + added }];
    }
    if (carried.type !== 'messageText')
      return [added === 0 ? carried : { ...carried, seq: carried.seq + added }];
    const { turn, attempt, seq } = carried;
    const pieces =
      messageText.length > MAX_TEXT_DELTA_EVENT_CHARS && patched(MESSAGE_TEXT_PIECES_PATCH)
        ? textPieces(messageText, MAX_TEXT_DELTA_EVENT_CHARS)
        : [messageText];
    const deltas = pieces.map(
      (text, index): ConversationEvent => ({
        type: 'textDelta',
        text,
        turn,
        attempt,
        seq: seq + added + index,
      }),
    );
    added += pieces.length - 1;
    return deltas;
  });
}

/** What `WorkflowStream` keeps in memory: its log of payloads and the offset of the first one. */
interface LiveLog {
  log: { payload: Payload }[];
  baseOffset: number;
}

/** The event at `index` of the live log. */
function eventAt(log: LiveLog['log'], index: number): ConversationEvent {
  const entry = log[index];
  if (!entry) throw new Error(`The event log has no entry ${index}`);
  return defaultPayloadConverter.fromPayload<ConversationEvent>(entry.payload);
}

/** How long an entry's payload is as base64, the form `getState()` and `carryOver()` measure. */
function encodedBytes(entry: LiveLog['log'][number] | undefined): number {
  return Math.ceil((entry?.payload.data?.length ?? 0) / 3) * 4;
}

/** The index from which the latest items add up to at most `maxBytes` of encoded data. */
function firstWithin(log: readonly { data: { length: number } }[], maxBytes: number): number {
  let bytes = 0;
  for (let index = log.length - 1; index >= 0; index--) {
    bytes += log[index]?.data.length ?? 0;
    if (bytes > maxBytes) return index + 1;
  }
  return 0;
}

/** What a result's placeholder events are rebuilt from: the model's reply text, a tool's result. */
export interface ResultTexts {
  messageText?: string;
  toolResult?: ToolResultMessage['content'];
}
