import {
  WorkflowStream,
  type WorkflowStreamState,
  type WorkflowTopicHandle,
} from '@temporalio/workflow-streams/workflow';
import { type ConversationEventBody, EVENTS_TOPIC } from '../src/protocol.ts';
import type { ConversationEvent } from '../src/types.ts';

/** What the event log hands to the next run when the conversation continues as new. */
export interface EventLogCarryOver {
  stream: WorkflowStreamState;
  seq: number;
}

/**
 * The conversation's event log: a workflow stream that activities publish to by signal and clients
 * follow by polling Update. Events the workflow publishes itself cost no history: they are rebuilt
 * on replay.
 */
export class ConversationEvents {
  readonly #stream: WorkflowStream;
  readonly #topic: WorkflowTopicHandle<ConversationEvent>;
  #seq: number;
  #detachedAt: number | undefined;

  constructor(carried?: EventLogCarryOver) {
    this.#stream = new WorkflowStream(carried?.stream);
    this.#topic = this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
    this.#seq = carried?.seq ?? 0;
  }

  publish(turn: number, event: ConversationEventBody): void {
    this.#topic.publish({ ...event, turn, attempt: 1, seq: this.#seq++ } as ConversationEvent);
  }

  /** Whether followers have been let go (they come back to the next run). */
  get detached(): boolean {
    return this.#detachedAt !== undefined;
  }

  /**
   * Lets waiting followers go, so that the run can finish or continue as new: their polls answer
   * with everything up to now, and later polls wait for the next run.
   */
  detachFollowers(): void {
    if (this.#detachedAt === undefined) {
      const state = this.#stream.getState();
      this.#detachedAt = state.base_offset + state.log.length;
    }
    this.#stream.detachPollers();
  }

  /**
   * The log for the next run: offsets continue, and only events followers may not have read (those
   * since they were let go) travel, so the new run's input stays small.
   */
  carryOver(): EventLogCarryOver {
    const state = this.#stream.getState();
    const end = state.base_offset + state.log.length;
    const keepFrom = Math.max(0, (this.#detachedAt ?? end) - state.base_offset);
    return {
      stream: { ...state, log: state.log.slice(keepFrom), base_offset: state.base_offset + keepFrom },
      seq: this.#seq,
    };
  }
}
