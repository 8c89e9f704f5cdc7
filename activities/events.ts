import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { MAX_HELD_BACK_EVENT_BYTES } from '../src/contract/limits.ts';
import { type ActivityEvents, type ConversationEventBody, EVENTS_TOPIC } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import type { ConversationEvent } from '../src/contract/types.ts';

/** How often buffered events travel to the workflow: one signal per interval, whatever the token rate. */
const BATCH_INTERVAL = '250 milliseconds';
/** A batch that cannot reach the workflow for this long is dropped: events never fail the activity. */
const MAX_RETRY_DURATION = '20 seconds';
/**
 * An attempt still running after this long sends its events live. Each signal costs the workflow a
 * workflow task and history events, so attempts shorter than this (most tool calls, many model
 * calls) hand their events over with their result instead; a follower sees them when the result
 * arrives, at most this much later than it would have live. Streamed text is the exception: a
 * follower reads along, so a followed model call goes live with its first batch of text.
 */
const LIVE_AFTER_MS = 500;
/**
 * With nobody following, events go live only after this long and then travel once per this interval:
 * a follower who attaches during a long call sees them at most this late, and nobody pays four
 * signals a second (each one a billed Action) for a stream nobody reads.
 */
const UNFOLLOWED_INTERVAL_MS = 5_000;

/** Publishes one activity attempt's events to its conversation's event log. */
export interface ActivityEventPublisher {
  /**
   * `now` sends a live event without waiting for the batch interval. `live` is `now` that also makes
   * a followed attempt go live for the event: a follower reads along with streamed text, so holding
   * it back for the result would show a model's first words half a second late.
   */
  publish(event: ConversationEventBody, options?: { now?: boolean; live?: boolean }): void;
  /**
   * The attempt succeeded: sends what is buffered and returns the events held back for the result
   * (none once the attempt went live). Call before returning, so events precede the result.
   */
  finish(): Promise<ActivityEvents>;
  /** The attempt failed: sends every event, so followers see how far it got before the retry. */
  abandon(): Promise<void>;
}

/**
 * A publisher for the current activity attempt: events carry its turn and attempt and a sequence
 * number starting at 0, so a retried attempt visibly starts over. `followed` says whether anyone
 * followed the log when the call was scheduled; if not, events travel rarely.
 */
export function activityEventPublisher(
  turn: number,
  warn: (message: string) => void,
  followed: boolean,
): ActivityEventPublisher {
  const context = Context.current();
  const { attempt, workflowExecution } = context.info;
  if (!workflowExecution) throw new Error('Conversation events come only from activities of a conversation');
  // Created when the attempt goes live: an attempt whose events travel in its result needs none.
  let stream: WorkflowStreamClient | undefined;
  const liveTopic = () => {
    stream ??= WorkflowStreamClient.create(context.client, workflowExecution.workflowId, {
      batchInterval: followed ? BATCH_INTERVAL : UNFOLLOWED_INTERVAL_MS,
      maxRetryDuration: MAX_RETRY_DURATION,
    });
    return stream.topic<ConversationEvent>(EVENTS_TOPIC);
  };
  const heldBack: ConversationEvent[] = [];
  let live = false;
  let seq = 0;
  let heldBackBytes = 0;

  const goLive = (): void => {
    if (live) return;
    live = true;
    clearTimeout(liveTimer);
    const topic = liveTopic();
    heldBack.splice(0).forEach((event, index, all) => {
      topic.publish(event, { forceFlush: index === all.length - 1 });
    });
  };
  const liveTimer = setTimeout(goLive, followed ? LIVE_AFTER_MS : UNFOLLOWED_INTERVAL_MS);
  const send = async (): Promise<void> => {
    try {
      await stream?.[Symbol.asyncDispose]();
    } catch (error) {
      warn(`Could not publish conversation events: ${describeThrown(error)}`);
    }
  };

  return {
    publish(event, publishOptions) {
      const full = { ...event, turn, attempt, seq: seq++ } as ConversationEvent;
      const awaited = publishOptions?.live === true;
      if (live) {
        liveTopic().publish(full, { forceFlush: followed && (awaited || publishOptions?.now === true) });
        return;
      }
      heldBack.push(full);
      heldBackBytes += JSON.stringify(full).length;
      if (heldBackBytes > MAX_HELD_BACK_EVENT_BYTES || (followed && awaited)) goLive();
    },
    async finish() {
      clearTimeout(liveTimer);
      if (!live) return heldBack.splice(0);
      await send();
      return [];
    },
    async abandon() {
      goLive();
      await send();
    },
  };
}
