/** Text deltas are gathered for this long before they become one event. */
const DEFAULT_INTERVAL_MS = 200;

/**
 * Gathers streamed text and hands it on at most once per interval, so a fast model produces a few
 * events a second instead of one per token. `streaming` says whether more text may follow: a batch
 * handed on mid-stream is one a reader is waiting for, the last one can travel with the result.
 */
export class TextDeltaBatcher {
  #buffer = '';
  #timer: NodeJS.Timeout | undefined;
  readonly #emit: (text: string, streaming: boolean) => void;
  readonly #intervalMs: number;

  constructor(emit: (text: string, streaming: boolean) => void, intervalMs = DEFAULT_INTERVAL_MS) {
    this.#emit = emit;
    this.#intervalMs = intervalMs;
  }

  add(text: string): void {
    if (text === '') return;
    this.#buffer += text;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#handOn(true);
    }, this.#intervalMs);
  }

  /** The stream ended: hands on whatever is buffered. */
  flush(): void {
    this.#handOn(false);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #handOn(streaming: boolean): void {
    if (this.#buffer === '') return;
    const text = this.#buffer;
    this.#buffer = '';
    this.#emit(text, streaming);
  }
}
