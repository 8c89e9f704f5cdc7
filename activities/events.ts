import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { type ConversationEventBody, EVENTS_TOPIC } from '../src/protocol.ts';
import type { ConversationEvent } from '../src/types.ts';
import { messageOf } from './prepare.ts';

/** How often buffered events travel to the workflow: one signal per interval, whatever the token rate. */
const BATCH_INTERVAL = '250 milliseconds';
/** A batch that cannot reach the workflow for this long is dropped: events never fail the activity. */
const MAX_RETRY_DURATION = '20 seconds';

/** Publishes one activity attempt's events to its conversation's event log. */
export interface ActivityEventPublisher {
  publish(event: ConversationEventBody, options?: { now?: boolean }): void;
  /** Sends what is buffered; call before the activity returns or throws, so events precede its result. */
  close(): Promise<void>;
}

/**
 * A publisher for the current activity attempt: events carry its turn and attempt and a sequence
 * number starting at 0, so a retried attempt visibly starts over.
 */
export function activityEventPublisher(
  turn: number,
  warn: (message: string) => void,
): ActivityEventPublisher {
  const context = Context.current();
  const { attempt } = context.info;
  const stream = WorkflowStreamClient.fromWithinActivity({
    batchInterval: BATCH_INTERVAL,
    maxRetryDuration: MAX_RETRY_DURATION,
  });
  const topic = stream.topic<ConversationEvent>(EVENTS_TOPIC);
  let seq = 0;
  return {
    publish(event, options) {
      topic.publish({ ...event, turn, attempt, seq: seq++ } as ConversationEvent, {
        forceFlush: options?.now === true,
      });
    },
    async close() {
      try {
        await stream[Symbol.asyncDispose]();
      } catch (error) {
        warn(`Could not publish conversation events: ${messageOf(error)}`);
      }
    },
  };
}
