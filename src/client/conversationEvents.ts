import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { EVENTS_TOPIC } from '../contract/protocol.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationEvent, ConversationEventItem } from '../contract/types/events.ts';
import { followLiveChannel, LiveEventOrder, liveChannelFor } from './liveEvents.ts';
import { isUnreachable, type ReconnectOptions, untilReachable } from './reachability.ts';

export type { ReconnectOptions } from './reachability.ts';

/** Options of `Conversation.events()`. */
export interface FollowEventsOptions {
  /** The offset to start from: 0 (the default) replays every event; `item.offset + 1` resumes after one. */
  fromOffset?: number;
  /** Stops following; the iterator then ends. */
  signal?: AbortSignal;
  /**
   * Follows on through Temporal outages: when Temporal cannot be reached, the iterator waits with
   * backoff until it answers again, and resumes from the next offset, instead of throwing.
   */
  reconnect?: ReconnectOptions;
  /**
   * Reads from the payload store's live channel when every worker of the conversation's task queue
   * copies events there and shares this client's store (default true): no poll Update per batch of
   * events. `false` polls the conversation's log by Update, as a client of another store must.
   */
  liveChannel?: boolean;
}

/**
 * Follows a conversation's event log until the conversation ends or `signal` aborts. The stream
 * library ends a subscription when a long poll times out; while the conversation still runs, this
 * subscribes again from the next offset, so a follower never misses or repeats an event. When the
 * conversation's workers copy its events to the payload store's live channel, it reads them there
 * instead: no poll Update per batch (each a billed Action and a row in the Web UI).
 */
export async function* followEvents(
  handle: WorkflowHandle,
  options: FollowEventsOptions = {},
): AsyncGenerator<ConversationEventItem, void, undefined> {
  const { signal, reconnect } = options;
  let offset = options.fromOffset ?? 0;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  // Read on the live channel when the conversation's workers copy events there; else polled.
  const live =
    options.liveChannel === false ? undefined : await liveChannelFor(handle).catch(() => undefined);
  // One for the whole follow: it remembers the previews shown before an outage.
  const order = live ? new LiveEventOrder(offset) : undefined;
  while (!signal?.aborted) {
    try {
      if (live && order) {
        for await (const item of followLiveChannel(handle, live, order, signal)) yield item;
        return;
      }
      const items = new WorkflowStreamClient(handle)
        .topic<ConversationEvent>(EVENTS_TOPIC)
        .subscribe(offset, { pollCooldown: '50 milliseconds' });
      for (;;) {
        const next = await Promise.race([items.next(), aborted]);
        if (next === 'aborted') {
          // The poll in flight ends on its own; returning here only stops waiting for it.
          void items.return(undefined).catch(() => {});
          return;
        }
        if (next.done) break;
        yield { ...next.value.data, offset: next.value.offset };
        offset = next.value.offset + 1;
      }
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') return;
    } catch (error) {
      if (!reconnect || signal?.aborted || !isUnreachable(error)) throw error;
      reconnect.onUnreachable?.(error instanceof Error ? error : new Error(describeThrown(error)));
      if (!(await untilReachable(handle, signal))) return;
      reconnect.onReconnected?.();
    }
  }
}
