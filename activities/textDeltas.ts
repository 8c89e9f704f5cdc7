/** Text deltas are gathered for this long before they become one event. */
const DEFAULT_INTERVAL_MS = 200;

/**
 * Gathers streamed text and hands it on at most once per interval, so a fast model produces a few
 * events a second instead of one per token.
 */
export class TextDeltaBatcher {
  #buffer = '';
  #timer: NodeJS.Timeout | undefined;
  readonly #emit: (text: string) => void;
  readonly #intervalMs: number;

  constructor(emit: (text: string) => void, intervalMs = DEFAULT_INTERVAL_MS) {
    this.#emit = emit;
    this.#intervalMs = intervalMs;
  }

  add(text: string): void {
    if (text === '') return;
    this.#buffer += text;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush();
    }, this.#intervalMs);
  }

  /** Hands on whatever is buffered now. */
  flush(): void {
    if (this.#buffer === '') return;
    const text = this.#buffer;
    this.#buffer = '';
    this.#emit(text);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
