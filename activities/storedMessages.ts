import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { StorageDriverTargetInfo } from '@temporalio/common';
import { LRUCache } from 'lru-cache';
import { withEntryMark } from '../src/contract/guardrails.ts';
import {
  DEFAULT_MESSAGE_CACHE_BYTES,
  DEFAULT_PAYLOAD_STORE_RETRY_MS,
  INLINE_MESSAGE_BYTES,
} from '../src/contract/limits.ts';
import { toolResultNotKeptMessage } from '../src/contract/messages.ts';
import type { ExecuteToolOutput } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { toolEndText } from '../src/contract/toolResult.ts';
import {
  entryBytes,
  type StoredContent,
  storedOutline,
  type TranscriptEntry,
} from '../src/contract/transcript.ts';
import type { Message } from '../src/contract/types/messages.ts';
import { ContentStore, storedKey } from '../src/infrastructure/storage/contentStore.ts';
import { PAYLOAD_STORE_ERROR } from '../src/infrastructure/storage/storeErrors.ts';

/** The first wait before a store write is tried again; it doubles up to the second. */
const FIRST_STORE_RETRY_MS = 250;
const LONGEST_STORE_RETRY_MS = 5_000;

/**
 * Puts large messages into the payload store (the one of the worker's data converter) and reads
 * them back, keeping the most recently used in a cache bounded in bytes. Without a payload store
 * every message stays inline.
 */
export class StoredMessages {
  readonly #getClient: () => Promise<Client>;
  readonly #cache: LRUCache<string, Message>;
  readonly #retryMs: number;

  constructor(
    getClient: () => Promise<Client>,
    { cacheBytes = DEFAULT_MESSAGE_CACHE_BYTES, storeRetryMs = DEFAULT_PAYLOAD_STORE_RETRY_MS } = {},
  ) {
    this.#getClient = getClient;
    this.#retryMs = storeRetryMs;
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
    const stored = await this.#put(store, message, bytes);
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

  /**
   * Puts the message, trying again with backoff while the store cannot take it, for up to the
   * worker's `payloadStoreRetryMs`: the result is finished, and failing the call would throw it away
   * (and run a tool again). The attempt heartbeats meanwhile, so it is not taken for a dead worker.
   */
  async #put(store: ContentStore, message: Message, bytes: number): Promise<StoredContent> {
    const context = Context.current();
    const giveUpAt = Date.now() + this.#retryMs;
    for (let wait = FIRST_STORE_RETRY_MS; ; wait = Math.min(wait * 2, LONGEST_STORE_RETRY_MS)) {
      try {
        return await store.put(message, bytes, conversationTarget());
      } catch (error) {
        const storeDown = error instanceof Error && error.name === PAYLOAD_STORE_ERROR;
        if (!storeDown || Date.now() + wait > giveUpAt || context.cancellationSignal.aborted) {
          throw storeDown ? storeGaveUp(error, this.#retryMs) : error;
        }
        context.heartbeat();
        await sleep(wait, undefined, { signal: context.cancellationSignal }).catch(() => undefined);
      }
    }
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

/** The store's last error, saying how long it was tried: the store stayed down, nothing else failed. */
function storeGaveUp(error: Error, retryMs: number): Error {
  const gaveUp = new Error(`${error.message} (tried for ${Math.round(retryMs / 1000)} s)`, { cause: error });
  gaveUp.name = PAYLOAD_STORE_ERROR;
  return gaveUp;
}

/**
 * A tool call's output as the transcript keeps it: a large result stored, with its outline. When the
 * store stayed down the call ends with an error result naming it (the tool is not run again), its
 * `toolEnd` event saying the same.
 */
export async function keepToolOutput(
  storedMessages: StoredMessages,
  output: ExecuteToolOutput,
): Promise<ExecuteToolOutput> {
  try {
    const { stored } = await storedMessages.keep(output.message);
    return stored ? { ...output, message: storedOutline(output.message, stored) } : output;
  } catch (error) {
    if (!(error instanceof Error && error.name === PAYLOAD_STORE_ERROR)) throw error;
    const { toolCallId, toolName } = output.message;
    const message = toolResultNotKeptMessage(toolCallId, toolName, describeThrown(error));
    const text = toolEndText(message.content);
    const events = output.events?.map((event) =>
      event.type === 'toolEnd' && event.toolCallId === toolCallId ? { ...event, isError: true, text } : event,
    );
    return { ...output, message, ...(events ? { events } : {}) };
  }
}
