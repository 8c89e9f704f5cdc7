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
