import { WorkflowStream } from '@temporalio/workflow-streams/workflow';
import { type ConversationEventBody, EVENTS_TOPIC } from '../src/protocol.ts';
import type { ConversationEvent } from '../src/types.ts';

/**
 * The conversation's event log: a workflow stream that activities publish to by signal and clients
 * follow by polling Update. Events the workflow publishes itself cost no history: they are rebuilt
 * on replay.
 */
export class ConversationEvents {
  readonly #stream = new WorkflowStream();
  readonly #topic = this.#stream.topic<ConversationEvent>(EVENTS_TOPIC);
  #seq = 0;

  publish(turn: number, event: ConversationEventBody): void {
    this.#topic.publish({ ...event, turn, attempt: 1, seq: this.#seq++ } as ConversationEvent);
  }

  /** Lets waiting followers go, so that the workflow can finish. */
  detachFollowers(): void {
    this.#stream.detachPollers();
  }
}
