import { createInterface, type Interface } from 'node:readline';

/**
 * Lines from the terminal (or a pipe), asked for one at a time. Lines typed before they are asked
 * for wait in order, so piped input works the same as typed input.
 */
export class LineReader {
  readonly readline: Interface;
  readonly #lines: string[] = [];
  readonly #waiting: ((line: string | null) => void)[] = [];
  #closed = false;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, terminal: boolean) {
    this.readline = createInterface({ input, output, terminal });
    this.readline.on('line', (line) => {
      const waiter = this.#waiting.shift();
      if (waiter) waiter(line);
      else this.#lines.push(line);
    });
    this.readline.on('close', () => {
      this.#closed = true;
      for (const waiter of this.#waiting.splice(0)) waiter(null);
    });
  }

  /** Shows `prompt` and resolves with the next line, or `null` once the input has ended. */
  next(prompt: string): Promise<string | null> {
    const queued = this.#lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#closed) return Promise.resolve(null);
    this.readline.setPrompt(prompt);
    this.readline.prompt();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  close(): void {
    this.readline.close();
  }
}
