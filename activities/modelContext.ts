import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { LRUCache } from 'lru-cache';
import {
  type CompactionSummary,
  contextEntryBytes,
  summaryBytes,
  summaryPreamble,
} from '../src/contract/compaction.ts';
import { compactionsQuery, modelContextQuery } from '../src/contract/definitions.ts';
import { DEFAULT_TRANSCRIPT_CACHE_BYTES } from '../src/contract/limits.ts';
import { MODEL_CONTEXT_NOT_CACHED } from '../src/contract/protocol.ts';
import {
  entryBytes,
  type StoredContent,
  type TranscriptEntry,
  type TranscriptTail,
} from '../src/contract/transcript.ts';
import type { Message } from '../src/contract/types/messages.ts';
import type { StoredMessages } from './storedMessages.ts';

interface CachedTranscript {
  systemPrompt: string;
  entries: TranscriptEntry[];
  bytes: number;
  /** Compaction summaries by compaction id (a compaction never changes once made). */
  summaries: Map<number, string>;
}

/** Which conversation's transcript to read, and how far. */
export interface TranscriptRequest {
  workflowId: string;
  runId: string;
  /** Names the transcript across continue-as-new (the first run's id); default `runId`. */
  transcriptId: string | undefined;
  messageCount: number;
  /** The entries before `messageCount` the workflow sent along: appended to a cache that reaches their start. */
  tail?: TranscriptTail | undefined;
  /**
   * The call is a local activity: the workflow task that waits for it is open, so a query would wait
   * for the call. What the cache lacks then fails the call (`MODEL_CONTEXT_NOT_CACHED`).
   */
  local?: boolean;
}

export interface ModelContextRequest extends TranscriptRequest {
  /** The transcript's inline messages to put into the payload store, by index. */
  storeIndices: readonly number[];
  /** The most the messages sent to the model may add up to; older turns are left out beyond it. */
  maxContextBytes: number;
  /** The compaction whose summary stands for the messages before `upTo`. */
  compaction?: { id: number; upTo: number } | undefined;
}

/** What a model call sends, and the references of the messages it stored for the transcript. */
export interface ModelContextWindow {
  /** The conversation's system prompt. */
  systemPrompt: string;
  /** What the system prompt gains (whichever agent's it is): the compaction's summary, or which messages are left out. */
  preamble: string;
  messages: Message[];
  stored: { index: number; stored: StoredContent }[];
}

/**
 * Reads a conversation's context for a model call. The transcript is append-only, so the worker keeps
 * the entries it has read (bounded in bytes, least recently used conversations dropped first). It
 * appends the entries the model call carries (its `tail`) when they continue the cache, and asks the
 * workflow (a query, never history) only for the entries it still lacks, a page at a time: a cold
 * cache, or a tail too large to carry. The cache is keyed by the conversation's first run, so a
 * continued run does not start cold.
 */
export class ModelContextReader {
  readonly #cache: LRUCache<string, CachedTranscript>;
  readonly #getClient: () => Promise<Client>;
  readonly #messages: StoredMessages;

  constructor(
    getClient: () => Promise<Client>,
    messages: StoredMessages,
    cacheBytes = DEFAULT_TRANSCRIPT_CACHE_BYTES,
  ) {
    this.#getClient = getClient;
    this.#messages = messages;
    this.#cache = new LRUCache<string, CachedTranscript>({
      maxSize: cacheBytes,
      sizeCalculation: (transcript) => Math.max(1, transcript.bytes),
    });
  }

  async read(request: ModelContextRequest): Promise<ModelContextWindow> {
    const { messageCount, compaction } = request;
    const transcript = await this.#transcript(request);
    const stored = await this.#storeInline(transcript, request.storeIndices, messageCount);
    const from = compaction?.upTo ?? 0;
    const summary = compaction ? await this.#summary(request, transcript, compaction.id) : undefined;
    const entries = transcript.entries.slice(from, messageCount);
    const maxBytes = request.maxContextBytes - summaryBytes(summary === undefined ? undefined : { summary });
    const start = windowStart(entries, maxBytes);
    const messages = await Promise.all(entries.slice(start).map((entry) => this.#messages.resolve(entry)));
    const notes = [
      summary === undefined ? '' : summaryPreamble(summary, from),
      start === 0
        ? ''
        : `[The ${from + start} earliest messages of this conversation are not shown: the whole conversation is larger than the context window of ${request.maxContextBytes} bytes.]`,
    ];
    const preamble = notes.filter((note) => note !== '').join('\n\n');
    return { systemPrompt: transcript.systemPrompt, preamble, messages, stored };
  }

  /** The whole messages `from` to `request.messageCount - 1`: what a compaction summarises. */
  async messagesBetween(request: TranscriptRequest, from: number): Promise<Message[]> {
    const transcript = await this.#transcript(request);
    const entries = transcript.entries.slice(from, request.messageCount);
    return Promise.all(entries.map((entry) => this.#messages.resolve(entry)));
  }

  /** The text of a summary as the workflow keeps it (resolved from the store when large). */
  async summaryText(summary: CompactionSummary): Promise<string> {
    if (!summary.stored) return summary.summary;
    const message = await this.#messages.resolve({
      role: 'user',
      content: '',
      timestamp: 0,
      stored: summary.stored,
    });
    return typeof message.content === 'string' ? message.content : '';
  }

  /**
   * Appends the entries a workflow on this worker handed over for its next model call (the
   * `yiemModelContext` sink), when the cached transcript reaches their start. A transcript this
   * worker has not read yet stays uncached: its first call reads it by query, whole.
   */
  feed(workflowId: string, transcriptId: string, tail: TranscriptTail): void {
    const key = transcriptKey({ workflowId, runId: transcriptId, transcriptId });
    const transcript = this.#cache.get(key);
    if (!transcript) return;
    appendTail(transcript, tail, tail.from + tail.entries.length);
    // Set again so that the cache's bound counts the appended bytes.
    this.#cache.set(key, transcript);
  }

  /** Keeps a new compaction's summary for the model calls that follow it on this worker. */
  rememberSummary(request: TranscriptRequest, id: number, summary: string): void {
    this.#cache.get(transcriptKey(request))?.summaries.set(id, summary);
  }

  async #transcript(request: TranscriptRequest): Promise<CachedTranscript> {
    const { workflowId, messageCount } = request;
    const key = transcriptKey(request);
    let transcript = this.#cache.get(key);
    if (transcript && request.tail) appendTail(transcript, request.tail, messageCount);
    if (!transcript || transcript.entries.length < messageCount) {
      if (request.local) notCached(`${transcript?.entries.length ?? 0} of its ${messageCount} messages`);
      transcript = await this.#fetchMissing(request, transcript);
    }
    if (transcript.entries.length < messageCount) {
      throw new Error(
        `Conversation ${workflowId} has ${transcript.entries.length} messages, fewer than the ${messageCount} this model call needs`,
      );
    }
    this.#cache.set(key, transcript);
    return transcript;
  }

  async #summary(request: TranscriptRequest, transcript: CachedTranscript, id: number): Promise<string> {
    const cached = transcript.summaries.get(id);
    if (cached !== undefined) return cached;
    if (request.local) notCached(`the summary of compaction ${id}`);
    const handle = (await this.#getClient()).workflow.getHandle(request.workflowId, request.runId);
    const [kept] = await handle.query(compactionsQuery, id);
    if (kept?.id !== id)
      throw new Error(`Conversation ${request.workflowId} no longer keeps compaction ${id}`);
    const summary = await this.summaryText(kept);
    transcript.summaries.set(id, summary);
    return summary;
  }

  async #fetchMissing(
    request: TranscriptRequest,
    cached: CachedTranscript | undefined,
  ): Promise<CachedTranscript> {
    const handle = (await this.#getClient()).workflow.getHandle(request.workflowId, request.runId);
    const transcript: CachedTranscript = cached ?? {
      systemPrompt: '',
      entries: [],
      bytes: 0,
      summaries: new Map(),
    };
    while (transcript.entries.length < request.messageCount) {
      const page = await handle.query(modelContextQuery, transcript.entries.length);
      transcript.systemPrompt = page.systemPrompt;
      if (page.messages.length === 0) break;
      for (const entry of page.messages) {
        transcript.entries.push(entry);
        transcript.bytes += entryBytes(entry);
      }
    }
    return transcript;
  }

  /** Stores the inline messages the workflow asked to, so that it can keep their outlines instead. */
  async #storeInline(
    transcript: CachedTranscript,
    indices: readonly number[],
    messageCount: number,
  ): Promise<ModelContextWindow['stored']> {
    const stored: ModelContextWindow['stored'] = [];
    for (const index of indices) {
      const entry = transcript.entries[index];
      if (!entry || index >= messageCount) continue;
      const kept = entry.stored ? entry : await this.#messages.keep(entry);
      if (!kept.stored) continue;
      transcript.bytes += entryBytes(kept) - entryBytes(entry);
      transcript.entries[index] = kept;
      stored.push({ index, stored: kept.stored });
    }
    return stored;
  }
}

/** Appends the tail's entries the cache lacks, when the cache reaches the tail's start (else it is left as is). */
function appendTail(transcript: CachedTranscript, tail: TranscriptTail, messageCount: number): void {
  const { entries } = transcript;
  if (entries.length < tail.from || entries.length >= messageCount) return;
  for (const entry of tail.entries.slice(entries.length - tail.from, messageCount - tail.from)) {
    entries.push(entry);
    transcript.bytes += entryBytes(entry);
  }
}

/** Fails a local model call whose context this worker lacks (see `TranscriptRequest.local`). */
function notCached(lacking: string): never {
  throw ApplicationFailure.create({
    type: MODEL_CONTEXT_NOT_CACHED,
    message: `This worker's cache lacks ${lacking}, which a model call run as a local activity cannot ask the workflow for`,
    nonRetryable: true,
  });
}

function transcriptKey(request: Pick<TranscriptRequest, 'workflowId' | 'runId' | 'transcriptId'>): string {
  return `${request.workflowId}/${request.transcriptId ?? request.runId}`;
}

/**
 * Where the messages sent to the model begin: at a user message, so that no tool result loses its
 * call, and as early as fits in `maxBytes`. The latest user message and everything after it are
 * always sent, however large: a turn's own tool results reach the model whole.
 */
export function windowStart(entries: readonly TranscriptEntry[], maxBytes: number): number {
  let bytes = 0;
  let start: number | undefined;
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as TranscriptEntry;
    bytes += contextEntryBytes(entry);
    if (bytes > maxBytes) return start ?? latestUserMessage(entries);
    if (entry.role === 'user') start = index;
  }
  return 0;
}

function latestUserMessage(entries: readonly TranscriptEntry[]): number {
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]?.role === 'user') return index;
  }
  return 0;
}
