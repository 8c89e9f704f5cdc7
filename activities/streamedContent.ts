import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';

/**
 * A streamed reply's content, delta by delta. Providers that answer with content blocks (`text`,
 * `tool_call`…) send them in one delta or spread over several, possibly after plain text deltas; the
 * `openai` stream's accumulator only concatenates strings, so the blocks are collected here, in
 * order, with the streamed text as text blocks between them.
 */
export class StreamedContent {
  readonly #parts: unknown[] = [];
  #sawBlocks = false;

  /** Takes one delta's `content`; returns the text it adds, for the text events. */
  add(content: unknown): string {
    if (typeof content === 'string') {
      this.#addText(content);
      return content;
    }
    if (!Array.isArray(content)) return '';
    this.#sawBlocks = true;
    let added = '';
    for (const block of content) {
      const blockText = textOf(block);
      if (blockText === undefined) this.#parts.push(block);
      else {
        this.#addText(blockText);
        added += blockText;
      }
    }
    return added;
  }

  /** Every block, streamed text included, or `undefined` when only strings came (the accumulator has them). */
  blocks(): unknown[] | undefined {
    return this.#sawBlocks ? [...this.#parts] : undefined;
  }

  #addText(text: string): void {
    if (text === '') return;
    const last = this.#parts.at(-1);
    if (textOf(last) !== undefined) (last as { text: string }).text += text;
    else this.#parts.push({ type: 'text', text });
  }
}

function textOf(block: unknown): string | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const { type, text } = block as { type?: unknown; text?: unknown };
  return type === 'text' && typeof text === 'string' ? text : undefined;
}

/** One tool call of a streamed reply, as its deltas (by `index`) build it. */
interface StreamedToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * A streamed reply assembled from the chunks of `chat.completions.create({ stream: true })`, as
 * `completionChunks` (models/completionStream.ts) reads them from the response: only as fast as they
 * are consumed (the `openai` stream helper reads ahead and failed a long, fast reply, more than 4,096
 * unread events, while this worker shared its event loop).
 */
export class StreamedCompletion {
  readonly #content = new StreamedContent();
  readonly #toolCalls: StreamedToolCall[] = [];
  #text = '';
  #id = '';
  #model = '';
  #created = 0;
  #finishReason: ChatCompletion.Choice['finish_reason'] | null = null;
  #usage: ChatCompletion['usage'];

  /** Takes one chunk; returns the text it adds, for the text events. */
  add(chunk: ChatCompletionChunk): string {
    this.#id ||= chunk.id;
    this.#model ||= chunk.model;
    this.#created ||= chunk.created;
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return '';
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    for (const call of choice.delta?.tool_calls ?? []) this.#addToolCall(call);
    const added = this.#content.add(choice.delta?.content as unknown);
    this.#text += added;
    return added;
  }

  /** The whole reply, shaped as a non-streamed completion; a stream cut short has no finish reason. */
  completion(): ChatCompletion {
    if (this.#finishReason === null) throw new Error('The model stream ended before the reply was complete');
    const content = this.#content.blocks() ?? this.#text;
    const toolCalls = this.#toolCalls.filter((call) => call !== undefined);
    const message = {
      role: 'assistant' as const,
      content: content as string,
      refusal: null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    return {
      id: this.#id,
      object: 'chat.completion',
      created: this.#created,
      model: this.#model,
      choices: [{ index: 0, message, finish_reason: this.#finishReason, logprobs: null }],
      ...(this.#usage ? { usage: this.#usage } : {}),
    };
  }

  #addToolCall(delta: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    this.#toolCalls[delta.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
    const call = this.#toolCalls[delta.index] as StreamedToolCall;
    if (delta.id) call.id = delta.id;
    // Some providers repeat the name in every delta of the call: it is set, not appended.
    if (delta.function?.name) call.function.name = delta.function.name;
    if (delta.function?.arguments) call.function.arguments += delta.function.arguments;
  }
}
