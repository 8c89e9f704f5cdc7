import {
  WorkflowStream,
  type WorkflowStreamState,
  type WorkflowTopicHandle,
} from '@temporalio/workflow-streams/workflow';
import { type ActivityEvents, type ConversationEventBody, EVENTS_TOPIC } from '../src/protocol.ts';
import type { ConversationEvent } from '../src/types.ts';

/** At most this many of the latest events travel to the next run (a few hundred kilobytes at most). */
const MAX_CARRIED_EVENTS = 500;

/** What the event log hands to the next run when the conversation continues as new. */
export interface EventLogCarryOver {
  stream: WorkflowStreamState;
  seq: number;
}

/**
 * The conversation's event log: a workflow stream that clients follow by polling Update. Long
 * activity attempts publish to it by signal, short ones in their result. Events the workflow
 * publishes itself cost no history of their own: they are rebuilt on replay.
 */
export class ConversationEvents {
  #stream: WorkflowStream;
  #topic: WorkflowTopicHandle<ConversationEvent>;
  #seq: number;
  #detached = false;

  constructor(carried?: EventLogCarryOver) {
    this.#stream = new WorkflowStream(carried?.stream);
    this.#topic = this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
    this.#seq = carried?.seq ?? 0;
  }

  publish(turn: number, event: ConversationEventBody): void {
    this.#topic.publish({ ...event, turn, attempt: 1, seq: this.#seq++ } as ConversationEvent);
  }

  /**
   * Publishes the events an activity attempt handed over with its result, with their own origin;
   * `messageText` becomes the delta carrying the whole text of the attempt's message.
   */
  publishFromResult(events: ActivityEvents, messageText = ''): void {
    for (const event of events) {
      const { type, turn, attempt, seq } = event;
      this.#topic.publish(
        type === 'messageText' ? { type: 'textDelta', text: messageText, turn, attempt, seq } : event,
      );
    }
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
  }

  /**
   * The log for the next run: offsets go on, and the latest events travel along, so that a follower
   * whose poll was bounced between runs (it may land a run or two later) still reads them. Older
   * events stay behind, so the new run's input stays small.
   */
  carryOver(): EventLogCarryOver {
    const state = this.#stream.getState();
    const end = state.base_offset + state.log.length;
    const keepFrom = Math.max(state.base_offset, end - MAX_CARRIED_EVENTS) - state.base_offset;
    return {
      stream: { ...state, log: state.log.slice(keepFrom), base_offset: state.base_offset + keepFrom },
      seq: this.#seq,
    };
  }
}
