import type { ConversationEventItem, PendingApproval, TurnResult } from '../contract/types.ts';
import { formatTurnResult } from './format.ts';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPIN_INTERVAL_MS = 100;

export interface TurnViewOptions {
  output: NodeJS.WritableStream;
  /** A terminal gets a spinner line that updates in place; a pipe gets one line per event. */
  interactive: boolean;
  /** Asks the person about a tool call; resolves true to approve. */
  askApproval(approval: PendingApproval): Promise<boolean>;
}

interface RunningTool {
  summary: string;
  progress: string;
}

/**
 * Draws a conversation's events as a person wants to see them: the agent's text as it streams, one
 * live line for the running tools, a line per finished tool, and approval questions.
 */
export class TurnView {
  readonly #options: TurnViewOptions;
  readonly #tools = new Map<string, RunningTool>();
  readonly #ended = new Map<number, TurnResult>();
  readonly #endWaiters: { turn: number; resolve: () => void }[] = [];
  #textOpen = false;
  #printedText = false;
  #spinnerShown = false;
  #frame = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Questions of the chat's own being asked now. */
  #asking = 0;
  #approvals: Promise<void> = Promise.resolve();
  /** Approvals asked about or queued and not yet resolved, by approval id. */
  readonly #openApprovals = new Set<string>();

  constructor(options: TurnViewOptions) {
    this.#options = options;
  }

  show(event: ConversationEventItem): void {
    switch (event.type) {
      case 'turnStart':
        this.#printedText = false;
        return;
      case 'messageStart':
        if (event.attempt > 1 && this.#textOpen) {
          this.#endText();
          this.#line(`↻ the model call failed; retrying (attempt ${event.attempt}), its text starts over`);
        }
        return;
      case 'textDelta':
        this.#clearSpinner();
        if (!this.#textOpen) this.#write('agent> ');
        this.#textOpen = true;
        this.#printedText = true;
        this.#write(event.text);
        return;
      case 'messageEnd':
        this.#endText();
        return;
      case 'toolStart':
        this.#tools.set(event.toolCallId, { summary: event.summary, progress: '' });
        if (!this.#options.interactive) this.#line(`  ⚙ ${event.summary}`);
        this.#drawSpinner();
        return;
      case 'toolProgress': {
        const tool = this.#tools.get(event.toolCallId);
        const progress = describeProgress(event.partialResult);
        if (tool) tool.progress = progress;
        if (!this.#options.interactive) this.#line(`  … ${event.toolName}: ${progress}`);
        this.#drawSpinner();
        return;
      }
      case 'toolEnd':
        this.#tools.delete(event.toolCallId);
        this.#line(
          event.willRetry
            ? `  ↻ ${event.toolName}: ${event.text} (trying again)`
            : `  ${event.isError ? '✗' : '✓'} ${event.toolName}: ${event.text}`,
        );
        this.#drawSpinner();
        return;
      case 'approvalRequested':
        this.#request(event.approval);
        return;
      case 'approvalResolved':
        this.#openApprovals.delete(event.outcome.approvalId);
        if (event.outcome.decidedBy === 'timeout') {
          const verdict = event.outcome.approved ? 'approved' : 'denied';
          this.#line(`  ⏱ ${event.outcome.toolCallId} ${verdict}: ${event.outcome.reason ?? 'timed out'}`);
        }
        return;
      case 'handoff':
        this.#line(`  ⇢ handed to ${event.to}`);
        return;
      case 'turnEnd':
        this.#finish(event.turn, event.result);
        return;
    }
  }

  /**
   * Asks about approvals that were already waiting when the chat attached, so their
   * `approvalRequested` events came before the followed offset. One the event stream delivers as
   * well is asked about once.
   */
  askPending(approvals: PendingApproval[]): void {
    for (const approval of approvals) this.#request(approval);
  }

  /** Resolves once the end of `turn` has been drawn. */
  turnEnded(turn: number): Promise<void> {
    if (this.#ended.has(turn)) return Promise.resolve();
    return new Promise((resolve) => this.#endWaiters.push({ turn, resolve }));
  }

  /** Draws a turn's result when its events could not be followed. */
  fallback(result: TurnResult): void {
    if (this.#ended.has(result.turn)) return;
    this.#finish(result.turn, result);
  }

  /**
   * Runs a question of the chat's own (e.g. a callback tool's confirmation): the spinner stays off
   * meanwhile, so its redraws never overwrite the question.
   */
  async ask<T>(question: () => Promise<T>): Promise<T> {
    this.#asking += 1;
    this.#endText();
    this.stop();
    try {
      return await question();
    } finally {
      this.#asking -= 1;
      this.#drawSpinner();
    }
  }

  /** Prints a line of the chat's own (help, notices) without breaking the agent's output. */
  notice(text: string): void {
    this.#endText();
    this.#line(text);
  }

  stop(): void {
    this.#clearSpinner();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #finish(turn: number, result: TurnResult): void {
    this.#endText();
    this.#tools.clear();
    this.stop();
    if (result.status !== 'completed' || !this.#printedText) this.#line(formatTurnResult(result));
    this.#ended.set(turn, result);
    for (const waiter of this.#endWaiters.filter((w) => w.turn <= turn)) waiter.resolve();
    this.#endWaiters.splice(0, this.#endWaiters.length, ...this.#endWaiters.filter((w) => w.turn > turn));
  }

  #request(approval: PendingApproval): void {
    const key = approval.approvalId;
    if (this.#openApprovals.has(key)) return;
    this.#openApprovals.add(key);
    this.#approvals = this.#approvals.then(() => this.#ask(approval, key));
  }

  async #ask(approval: PendingApproval, key: string): Promise<void> {
    // Settled while earlier questions were open (a timeout, another client): nothing left to answer.
    if (!this.#openApprovals.has(key)) return;
    this.#endText();
    this.stop();
    const call = `${approval.toolName}(${JSON.stringify(approval.args)})`;
    const asker = approval.subAgent ? ` (asked by sub-agent ${approval.subAgent.agent})` : '';
    this.#line(`? ${call}${asker} needs your approval: ${approval.reason}`);
    const approved = await this.#options.askApproval(approval);
    this.#line(approved ? `  approved ${approval.toolName}` : `  denied ${approval.toolName}`);
    this.#drawSpinner();
  }

  #drawSpinner(): void {
    if (!this.#options.interactive || this.#asking > 0) return;
    if (this.#tools.size === 0) {
      this.stop();
      return;
    }
    this.#timer ??= setInterval(() => this.#drawSpinner(), SPIN_INTERVAL_MS);
    const tools = [...this.#tools.values()]
      .map((tool) => (tool.progress ? `${tool.summary} · ${tool.progress}` : tool.summary))
      .join('  |  ');
    const frame = SPINNER[this.#frame++ % SPINNER.length];
    this.#write(`\r\x1b[2K${frame} ${tools}`);
    this.#spinnerShown = true;
  }

  #clearSpinner(): void {
    if (!this.#spinnerShown) return;
    this.#write('\r\x1b[2K');
    this.#spinnerShown = false;
  }

  #endText(): void {
    if (!this.#textOpen) return;
    this.#write('\n');
    this.#textOpen = false;
  }

  #line(text: string): void {
    this.#clearSpinner();
    this.#write(`${text}\n`);
  }

  #write(text: string): void {
    this.#options.output.write(text);
  }
}

/** `{ status: 'Downloading', percent: 40 }` → `status: Downloading, percent: 40`. */
function describeProgress(partial: Record<string, unknown>): string {
  return Object.entries(partial)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}
