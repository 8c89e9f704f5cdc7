import { APIError, OpenAIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** One server-sent event: its `event` field (if any) and its data lines joined. */
interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/**
 * The chunks of a streamed chat completion, read from its HTTP response (`create(...).asResponse()`,
 * which has thrown already for an error status), as many as each read of the body holds. The
 * `openai` stream hands on one chunk per event through four async generators, microtasks and
 * promises each time; a model that streams megabytes in tiny deltas sends half a million of them,
 * which held the worker's event loop for seconds. Here a read's events are parsed in one pass.
 * Otherwise it reads as the `openai` stream does: `[DONE]` ends it, an `error` event or an error in
 * the data throws an `APIError`, data that is not JSON throws, and a read cut by `signal` ends it
 * quietly (the reply is then incomplete, which the caller finds).
 */
export async function* completionChunks(
  response: Response,
  signal: AbortSignal,
): AsyncGenerator<ChatCompletionChunk[]> {
  if (!response.body) throw new OpenAIError('Attempted to iterate over a response with no body');
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events = new EventReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      const read = events.add(text, done);
      const chunks = read.map((event) => chunkOf(event, response.headers)).filter((chunk) => chunk !== null);
      if (chunks.length > 0) yield chunks;
      if (done || events.finished) return;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** An event's chunk, null for one to skip; throws for an error event or data that is not JSON. */
function chunkOf({ event, data }: ServerSentEvent, headers: Headers): ChatCompletionChunk | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
  }
  const body = parsed as { error?: unknown } | null;
  if (event === 'error') throw new APIError(undefined, body?.error ?? body ?? undefined, undefined, headers);
  if (body?.error) throw new APIError(undefined, body.error, undefined, headers);
  return event?.startsWith('thread.') ? null : (parsed as ChatCompletionChunk);
}

/** Server-sent events from text as it arrives, the line endings of the standard (`\n`, `\r\n`, `\r`) all read. */
class EventReader {
  #pending = '';
  #finished = false;

  /** Whether `[DONE]` came: nothing after it is read. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Takes the next text of the body (`last`: the body ended); returns the events it completes. */
  add(text: string, last: boolean): ServerSentEvent[] {
    let pending = this.#pending + text;
    // A `\r` at the end may be the first half of a `\r\n`: it waits for the next text.
    const heldCr = !last && pending.endsWith('\r');
    if (heldCr) pending = pending.slice(0, -1);
    if (pending.includes('\r')) pending = pending.replace(/\r\n?/g, '\n');
    const end = last ? pending.length : pending.lastIndexOf('\n\n');
    if (end < 0) {
      this.#pending = heldCr ? `${pending}\r` : pending;
      return [];
    }
    this.#pending = last ? '' : pending.slice(end + 2) + (heldCr ? '\r' : '');
    const events: ServerSentEvent[] = [];
    for (const block of pending.slice(0, end).split('\n\n')) {
      const event = parseEvent(block);
      if (!event) continue;
      if (event.data === '[DONE]') {
        this.#finished = true;
        break;
      }
      events.push(event);
    }
    return events;
  }
}

/** One event's lines; undefined when it has no data (a comment, a bare `event:` or `retry:`). */
function parseEvent(block: string): ServerSentEvent | undefined {
  // Nearly every event of a chat completion is one `data: ` line.
  if (block.startsWith('data: ') && !block.includes('\n')) return { event: undefined, data: block.slice(6) };
  let event: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  return data.length > 0 ? { event, data: data.join('\n') } : undefined;
}
