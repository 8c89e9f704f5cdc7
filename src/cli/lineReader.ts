import { createInterface, type Interface } from 'node:readline';

interface Waiter {
  prompt: string;
  question: boolean;
  resolve(line: string | null): void;
}

/**
 * Lines from the terminal (or a pipe), asked for one at a time. Lines typed before they are asked
 * for wait in order, so piped input works the same as typed input. A question ({@link ask}) takes
 * the next line ahead of a prompt that is already waiting.
 */
export class LineReader {
  readonly readline: Interface;
  readonly #output: NodeJS.WritableStream;
  readonly #terminal: boolean;
  readonly #lines: string[] = [];
  readonly #waiting: Waiter[] = [];
  #closed = false;
  /** Outstanding {@link hide} calls: turns started elsewhere may overlap. */
  #hidden = 0;
  /** What was typed at the prompt when a question took the line; typed back when the prompt returns. */
  #draft = '';
  /**
   * Set: a line typed while nothing asks for one goes here first (the chat's messages to a running
   * turn); it stays in line for the next prompt when this returns false.
   */
  unasked: ((line: string) => boolean) | undefined;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, terminal: boolean) {
    this.#output = output;
    this.#terminal = terminal;
    this.readline = createInterface({ input, output, terminal });
    this.readline.on('line', (line) => {
      const waiter = this.#waiting.shift();
      if (!waiter) {
        if (this.unasked?.(line)) return;
        this.#lines.push(line);
        return;
      }
      waiter.resolve(line);
      const next = this.#waiting[0];
      if (next && (next.question || this.#hidden === 0)) this.#show(next);
    });
    this.readline.on('close', () => {
      this.#closed = true;
      for (const waiter of this.#waiting.splice(0)) waiter.resolve(null);
    });
  }

  /** Shows `prompt` and resolves with the next line, or `null` once the input has ended. */
  next(prompt: string): Promise<string | null> {
    return this.#wait({ prompt, question: false });
  }

  /**
   * Like {@link next}, but when a prompt is already waiting, the question gets the next line and the
   * prompt comes back after it, with what had been typed at it. When `withdrawn` aborts first (the
   * question was settled elsewhere), the question leaves the screen, resolves `null`, and the next
   * line typed goes to whatever waits after it.
   */
  ask(prompt: string, withdrawn?: AbortSignal): Promise<string | null> {
    return this.#wait({ prompt, question: true }, withdrawn);
  }

  /** Draws the waiting prompt again, with what is typed at it, after output was printed over it. */
  redraw(): void {
    const waiter = this.#waiting[0];
    if (this.#terminal && waiter && (waiter.question || this.#hidden === 0)) this.readline.prompt(true);
  }

  /** Takes a waiting prompt off the screen so output can be printed; {@link reveal} brings it back. */
  hide(): void {
    this.#hidden++;
    if (this.#hidden === 1 && this.#waiting[0]?.question === false) this.#takeDraft();
  }

  reveal(): void {
    if (this.#hidden === 0) return;
    this.#hidden--;
    if (this.#hidden > 0) return;
    const waiter = this.#waiting[0];
    if (waiter && !waiter.question) this.#show(waiter);
  }

  close(): void {
    this.readline.close();
  }

  #wait(waiter: Omit<Waiter, 'resolve'>, withdrawn?: AbortSignal): Promise<string | null> {
    if (withdrawn?.aborted) return Promise.resolve(null);
    const queued = this.#lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const entry = { ...waiter, resolve };
      const before = waiter.question ? this.#waiting.findIndex((w) => !w.question) : -1;
      if (before === -1) this.#waiting.push(entry);
      else this.#waiting.splice(before, 0, entry);
      if (this.#waiting[0] === entry && (entry.question || this.#hidden === 0)) this.#show(entry);
      withdrawn?.addEventListener('abort', () => this.#withdraw(entry), { once: true });
    });
  }

  /** Takes a question that nobody needs answered any more off the screen, with what was typed at it. */
  #withdraw(entry: Waiter): void {
    const index = this.#waiting.indexOf(entry);
    if (index === -1) return;
    this.#waiting.splice(index, 1);
    entry.resolve(null);
    if (index > 0) return;
    if (this.#terminal) {
      this.#clearTyped();
      this.#output.write('\r\x1b[2K');
    }
    const next = this.#waiting[0];
    if (next && (next.question || this.#hidden === 0)) this.#show(next);
  }

  #show(waiter: Waiter): void {
    if (waiter.question) this.#takeDraft();
    this.readline.setPrompt(waiter.prompt);
    this.readline.prompt();
    if (!waiter.question && this.#draft) {
      const draft = this.#draft;
      this.#draft = '';
      this.readline.write(draft);
    }
  }

  /** Empties the line being typed (keeping it for later) and clears its row on the screen. */
  #takeDraft(): void {
    if (!this.#terminal) return;
    this.#draft += this.readline.line;
    this.#clearTyped();
    this.#output.write('\r\x1b[2K');
  }

  #clearTyped(): void {
    if (!this.readline.line) return;
    this.readline.write(null, { ctrl: true, name: 'e' });
    this.readline.write(null, { ctrl: true, name: 'u' });
  }
}
