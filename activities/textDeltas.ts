import { setImmediate } from 'node:timers/promises';
import { MAX_TEXT_DELTA_EVENT_CHARS } from '../src/contract/limits.ts';

/** Text deltas are gathered for this long before they become one event: a live one may be a signal, a billed Action. */
const INTERVAL_MS = 200;
/** While followers read the call on the live channel, where an event costs a file write, for this long. */
const LIVE_CHANNEL_INTERVAL_MS = 100;

/**
 * Gathers streamed text and hands it on at most once per interval, so a fast model produces a few
 * events a second instead of one per token, or sooner once `MAX_TEXT_DELTA_EVENT_CHARS` are gathered. `streaming` says whether more text may follow: a batch
 * handed on mid-stream is one a reader is waiting for, the last one can travel with the result.
 */
export class TextDeltaBatcher {
  #buffer = '';
  #timer: NodeJS.Timeout | undefined;
  readonly #emit: (text: string, streaming: boolean) => void;
  readonly #onLiveChannel: () => boolean;

  /** `onLiveChannel`: whether followers read the call's events on the live channel now. */
  constructor(emit: (text: string, streaming: boolean) => void, onLiveChannel: () => boolean = () => false) {
    this.#emit = emit;
    this.#onLiveChannel = onLiveChannel;
  }

  add(text: string): void {
    if (text === '') return;
    this.#buffer += text;
    if (this.#buffer.length >= MAX_TEXT_DELTA_EVENT_CHARS) {
      this.stop();
      this.#handOn(true);
      return;
    }
    this.#timer ??= setTimeout(
      () => {
        this.#timer = undefined;
        this.#handOn(true);
      },
      this.#onLiveChannel() ? LIVE_CHANNEL_INTERVAL_MS : INTERVAL_MS,
    );
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

/** The longest a stream's chunks are handled without letting the worker's other work run. */
const SHARE_EVENT_LOOP_EVERY_MS = 5;

/**
 * Lets the worker's other conversations run while a stream is read. A response the endpoint sends
 * faster than the worker reads piles up in the socket's buffer, and the stream hands its chunks on
 * as resolved promises: half a million tiny deltas would be handled in one run of microtasks,
 * seconds long, with no timer or socket of any other call served meanwhile.
 */
export class EventLoopShare {
  #since = performance.now();

  /** Yields to the event loop when the caller has held it for long enough. */
  async now(): Promise<void> {
    if (performance.now() - this.#since < SHARE_EVENT_LOOP_EVERY_MS) return;
    await setImmediate();
    this.#since = performance.now();
  }
}
