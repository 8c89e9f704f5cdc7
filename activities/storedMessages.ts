import { setImmediate } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { StorageDriverTargetInfo } from '@temporalio/common';
import { LRUCache } from 'lru-cache';
import { withEntryMark } from '../src/contract/guardrails.ts';
import { DEFAULT_MESSAGE_CACHE_BYTES, INLINE_MESSAGE_BYTES } from '../src/contract/limits.ts';
import {
  entryBytes,
  type StoredContent,
  storedOutline,
  type TranscriptEntry,
} from '../src/contract/transcript.ts';
import type { Message } from '../src/contract/types/messages.ts';
import { ContentStore, storedKey } from '../src/infrastructure/storage/contentStore.ts';

/**
 * Puts large messages into the payload store (the one of the worker's data converter) and reads
 * them back, keeping the most recently used in a cache bounded in bytes. Without a payload store
 * every message stays inline.
 */
export class StoredMessages {
  readonly #getClient: () => Promise<Client>;
  readonly #cache: LRUCache<string, Message>;

  constructor(getClient: () => Promise<Client>, cacheBytes = DEFAULT_MESSAGE_CACHE_BYTES) {
    this.#getClient = getClient;
    this.#cache = new LRUCache<string, Message>({
      maxSize: cacheBytes,
      sizeCalculation: (message) => Math.max(1, entryBytes(message)),
    });
  }

  /** The message as the transcript should keep it: inline, or stored with its outline. */
  async keep<M extends Message>(message: M): Promise<M & { stored?: StoredContent }> {
    const bytes = entryBytes(message);
    if (bytes <= INLINE_MESSAGE_BYTES) return message;
    const store = await this.#store();
    if (!store) return message;
    // Measuring and serialising a message of megabytes each hold the event loop for tens of
    // milliseconds; other conversations' work runs in between.
    await setImmediate();
    const stored = await store.put(message, bytes, conversationTarget());
    this.#cache.set(storedKey(stored), message, { size: Math.max(1, bytes) });
    return storedOutline(message, stored);
  }

  /** The whole message of an entry. */
  async resolve(entry: TranscriptEntry): Promise<Message> {
    const { stored } = entry;
    if (!stored) return entry;
    const key = storedKey(stored);
    const cached = this.#cache.get(key);
    if (cached) return withEntryMark(entry, cached);
    const store = await this.#store();
    if (!store) throw new Error('The transcript keeps messages in a payload store this worker does not have');
    const message = await store.get<Message>(stored);
    this.#cache.set(key, message);
    return withEntryMark(entry, message);
  }

  async #store(): Promise<ContentStore | undefined> {
    return ContentStore.of((await this.#getClient()).options.loadedDataConverter);
  }
}

/** The conversation of the activity storing a message (its transcript spans runs, so no run id). */
function conversationTarget(): StorageDriverTargetInfo | undefined {
  const { workflowNamespace, workflowExecution, workflowType } = Context.current().info;
  if (!workflowNamespace || !workflowExecution) return undefined;
  return {
    kind: 'workflow',
    namespace: workflowNamespace,
    id: workflowExecution.workflowId,
    ...(workflowType ? { type: workflowType } : {}),
  };
}
