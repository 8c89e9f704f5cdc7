import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { EVENTS_TOPIC } from '../contract/protocol.ts';
import type { ConversationEvent, ConversationEventItem } from '../contract/types.ts';

/** Options of `Conversation.events()`. */
export interface FollowEventsOptions {
  /** The offset to start from: 0 (the default) replays every event; `item.offset + 1` resumes after one. */
  fromOffset?: number;
  /** Stops following; the iterator then ends. */
  signal?: AbortSignal;
}

/**
 * Follows a conversation's event log until the conversation ends or `signal` aborts. The stream
 * library ends a subscription when a long poll times out; while the conversation still runs, this
 * subscribes again from the next offset, so a follower never misses or repeats an event.
 */
export async function* followEvents(
  handle: WorkflowHandle,
  options: FollowEventsOptions = {},
): AsyncGenerator<ConversationEventItem, void, undefined> {
  const { signal } = options;
  let offset = options.fromOffset ?? 0;
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  while (!signal?.aborted) {
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
  }
}
