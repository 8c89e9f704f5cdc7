import type { Client } from '@temporalio/client';
import type { Message } from '../src/types.ts';
import { modelContextQuery } from '../workflows/definitions.ts';

interface CachedContext {
  systemPrompt: string;
  messages: Message[];
}

/** Open conversations whose context a worker keeps; the least recently used are dropped first. */
const DEFAULT_CAPACITY = 2_000;

/**
 * Reads a conversation's context for a model call. The transcript is append-only, so the worker keeps
 * what it has read and asks the workflow (a query, never history) only for the messages it lacks.
 */
export class ModelContextReader {
  readonly #cache = new Map<string, CachedContext>();
  readonly #getClient: () => Promise<Client>;
  readonly #capacity: number;

  constructor(getClient: () => Promise<Client>, capacity = DEFAULT_CAPACITY) {
    this.#getClient = getClient;
    this.#capacity = capacity;
  }

  async read(workflowId: string, runId: string, messageCount: number): Promise<CachedContext> {
    const key = `${workflowId}/${runId}`;
    let cached = this.#cache.get(key);
    if (!cached || cached.messages.length < messageCount) {
      cached = await this.#fetchMissing(workflowId, runId, cached);
    }
    this.#touch(key, cached);
    if (cached.messages.length < messageCount) {
      throw new Error(
        `Conversation ${workflowId} has ${cached.messages.length} messages, fewer than the ${messageCount} this model call needs`,
      );
    }
    return { systemPrompt: cached.systemPrompt, messages: cached.messages.slice(0, messageCount) };
  }

  async #fetchMissing(
    workflowId: string,
    runId: string,
    cached: CachedContext | undefined,
  ): Promise<CachedContext> {
    const client = await this.#getClient();
    const from = cached?.messages.length ?? 0;
    const fetched = await client.workflow.getHandle(workflowId, runId).query(modelContextQuery, from);
    return {
      systemPrompt: fetched.systemPrompt,
      messages: [...(cached?.messages ?? []), ...fetched.messages],
    };
  }

  #touch(key: string, context: CachedContext): void {
    this.#cache.delete(key);
    this.#cache.set(key, context);
    if (this.#cache.size > this.#capacity) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }
}
