import { exhaustionMessage, formatSpend } from '../contract/budget.ts';
import { guardrailSubject } from '../contract/guardrails.ts';
import { CLI_RESULT_LINE_CHARS } from '../contract/limits.ts';
import { describeThrown } from '../contract/thrown.ts';
import { resultText } from '../contract/toolResult.ts';
import { firstLine } from '../contract/truncate.ts';
import type { ApprovalOutcome, PendingApproval } from '../contract/types/approvals.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';
import type { MessageDelivery, ToolResultMessage } from '../contract/types/messages.ts';
import type { InterruptedCallOutcome } from '../contract/types/tools.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { formatTurnResult } from './format.ts';

/** How the chat names each delivery (`MessageDelivery`). */
const DELIVERY_NAMES: Record<MessageDelivery, string> = {
  steer: 'message',
  followUp: 'follow-up',
  interrupt: 'interrupt',
};

/** Where a message sent while a turn ran entered it. */
function deliveredLine(event: Extract<ConversationEventItem, { type: 'messageDelivered' }>): string {
  const name = DELIVERY_NAMES[event.delivery];
  if (event.afterModelCall === 0) return `the ${name} opened turn ${event.turn}`;
  const cut = event.interruptedCalls
    ? `, ${event.interruptedCalls} tool call${event.interruptedCalls === 1 ? '' : 's'} cut short`
    : '';
  return `the ${name} joined turn ${event.turn} after model call ${event.afterModelCall}${cut}`;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPIN_INTERVAL_MS = 100;

export interface TurnViewOptions {
  output: NodeJS.WritableStream;
  /** A terminal gets a spinner line that updates in place; a pipe gets one line per event. */
  interactive: boolean;
  /**
   * Asks the person about a tool call: true to approve, false to deny, `null` when `withdrawn`
   * aborted first (the call was settled elsewhere) or the input ended.
   */
  askApproval(approval: PendingApproval, withdrawn: AbortSignal): Promise<boolean | null>;
  /** Hands the person's answer to the conversation; throws when it was refused. */
  decide(approval: PendingApproval, approved: boolean): Promise<void>;
  /**
   * The results of tool calls whose outcome no event showed (answered in PREPARE, failed for good
   * or cancelled by the workflow), read from the transcript.
   */
  readResults(calls: readonly BatchCall[]): Promise<ToolResultMessage[]>;
  /** Draws the prompt or question again after a line was printed over it. */
  redrawPrompt?(): void;
}

/** A tool call the model asked for, as its `messageEnd` names it. */
export interface BatchCall {
  id: string;
  name: string;
}

interface RunningTool {
  summary: string;
  progress: string;
}

/** The tool calls of the latest model message, and which of them an event has settled on screen. */
interface Batch {
  turn: number;
  calls: BatchCall[];
  settled: Set<string>;
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
  /** Whether the model call's latest attempt printed text: a retry must say that text was lost. */
  #attemptPrintedText = false;
  #spinnerShown = false;
  #frame = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Questions of the chat's own being asked now. */
  #asking = 0;
  #approvals: Promise<void> = Promise.resolve();
  /** Approvals asked about or queued and not yet resolved, by approval id. */
  readonly #openApprovals = new Map<string, PendingApproval>();
  /** Questions on screen, by approval id: aborting one takes it off the screen. */
  readonly #questions = new Map<string, AbortController>();
  /** Approvals this chat is handing its answer to right now: their resolution is its own. */
  readonly #decidingHere = new Set<string>();
  /** How approvals were settled, by approval id, for an answer that came too late. */
  readonly #outcomes = new Map<string, ApprovalOutcome>();
  /** Calls whose failed attempt was shown as such, so the next attempt needs no further note. */
  readonly #retrying = new Set<string>();
  #batch: Batch | undefined;

  constructor(options: TurnViewOptions) {
    this.#options = options;
  }

  show(event: ConversationEventItem): void {
    // A turn already drawn from its result (its events came late, after a reconnect) is not drawn
    // twice. Approval events are exempt: a sub-agent's carry the child conversation's turn.
    const approvalEvent = event.type === 'approvalRequested' || event.type === 'approvalResolved';
    if (!approvalEvent && this.#ended.has(event.turn)) return;
    this.#track(event);
    switch (event.type) {
      case 'turnStart':
        this.#printedText = false;
        return;
      case 'messageStart':
      case 'textDelta':
      case 'messageEnd':
        this.#showText(event);
        return;
      case 'toolStart':
      case 'toolProgress':
      case 'toolEnd':
        this.#showTool(event);
        return;
      case 'approvalRequested':
        this.#request(event.approval);
        return;
      case 'approvalResolved':
        this.#resolved(event.outcome);
        return;
      case 'turnEnd':
        this.#finish(event.turn, event.result);
        return;
      default:
        this.#showNote(event);
    }
  }

  /** The model's text as it streams; a retried call's text starts over after a note saying so. */
  #showText(
    event: Extract<ConversationEventItem, { type: 'messageStart' | 'textDelta' | 'messageEnd' }>,
  ): void {
    switch (event.type) {
      case 'messageStart':
        // Its earlier attempt's text may have ended (a messageEnd came, or an outage note cut it):
        // the next attempt's reply must not read as a second one.
        if (event.attempt > 1 && this.#attemptPrintedText) {
          this.#endText();
          this.#line(`↻ the model call failed; retrying (attempt ${event.attempt}), its text starts over`);
        }
        this.#attemptPrintedText = false;
        return;
      case 'textDelta':
        this.#clearSpinner();
        if (!this.#textOpen) this.#write('agent> ');
        this.#textOpen = true;
        this.#printedText = true;
        this.#attemptPrintedText = true;
        this.#write(event.text);
        return;
      case 'messageEnd':
        this.#endText();
        return;
    }
  }

  /** The running tools' live line, and a line per finished (or retried) tool call. */
  #showTool(event: Extract<ConversationEventItem, { type: 'toolStart' | 'toolProgress' | 'toolEnd' }>): void {
    switch (event.type) {
      case 'toolStart': {
        const retried = event.attempt > 1;
        if (retried && !this.#retrying.has(event.toolCallId)) {
          this.#line(
            `  ↻ ${event.toolName}: attempt ${event.attempt} (the previous attempt ended without a result: its worker stopped or timed out)`,
          );
        }
        this.#retrying.delete(event.toolCallId);
        const summary = retried ? `${event.summary} (attempt ${event.attempt})` : event.summary;
        this.#tools.set(event.toolCallId, { summary, progress: '' });
        if (!this.#options.interactive) this.#line(`  ⚙ ${summary}`);
        break;
      }
      case 'toolProgress': {
        const tool = this.#tools.get(event.toolCallId);
        const progress = describeProgress(event.partialResult);
        if (tool) tool.progress = progress;
        if (!this.#options.interactive) this.#line(`  … ${event.toolName}: ${progress}`);
        break;
      }
      case 'toolEnd':
        this.#tools.delete(event.toolCallId);
        if (event.willRetry) this.#retrying.add(event.toolCallId);
        this.#line(
          event.willRetry
            ? `  ↻ ${event.toolName}: ${event.text} (trying again)`
            : `  ${toolEndMark(event)} ${event.toolName}: ${event.text}`,
        );
        break;
    }
    this.#drawSpinner();
  }

  /** The turn's other events, each a line of its own. */
  #showNote(event: ConversationEventItem): void {
    switch (event.type) {
      case 'handoff':
        this.#line(`  ⇢ handed to ${event.to}`);
        return;
      case 'modelFallback':
        this.#line(`  ↪ model ${event.from} could not answer (${event.cause}); asking ${event.to}`);
        return;
      case 'compaction':
        this.#line(
          `  ⇣ compacted: messages ${event.from + 1}–${event.upTo} folded into the summary the model reads; the transcript keeps them`,
        );
        return;
      case 'turnStopped':
        this.#endText();
        this.#tools.clear();
        this.stop();
        this.#line(
          event.stop.reason === 'paused'
            ? `⏸ paused by an operator at a safe point (spent this turn: ${formatSpend(event.spend.turn)})`
            : `⏸ ${exhaustionMessage(event.stop.exhausted)}`,
        );
        return;
      case 'turnResumed':
        this.#line('▶ resumed');
        return;
      case 'messageQueued':
        this.#line(`  ✉ ${DELIVERY_NAMES[event.delivery]} queued: ${event.text}`);
        return;
      case 'messageDelivered':
        this.#line(`  ↳ ${deliveredLine(event)}`);
        return;
      case 'guardrailRewrote':
        this.#endText();
        this.#line(`  ✎ guardrail ${event.guardrail} rewrote ${guardrailSubject(event.stage)}`);
        // The reply streamed as the model wrote it: the turn's end prints the rewritten one.
        if (event.stage === 'output') this.#printedText = false;
        return;
      case 'guardrailTripped':
        // The turn's end says which guardrail tripped and why.
        this.#endText();
        return;
    }
  }

  /**
   * Call before {@link show} with each event, awaiting it: when `event` shows that the latest model
   * message's tool calls are all done (the next model call starts, or the turn ends), prints the
   * results of those no event showed — calls answered in PREPARE (an unknown tool, arguments that
   * are not valid, a `beforeToolCall` block), and calls the workflow settled itself (failed for
   * good, cancelled) — from the transcript.
   */
  async settle(event: ConversationEventItem): Promise<void> {
    const batch = this.#batch;
    if (!batch || (event.type !== 'messageStart' && event.type !== 'turnEnd')) return;
    if (event.turn !== batch.turn || this.#ended.has(event.turn)) return;
    this.#batch = undefined;
    const unsettled = batch.calls.filter((call) => !batch.settled.has(call.id));
    if (unsettled.length === 0) return;
    const results = await this.#options.readResults(unsettled).catch(() => []);
    for (const result of results) {
      this.#tools.delete(result.toolCallId);
      this.#line(
        `  ${result.isError ? '✗' : '✓'} ${result.toolName}: ${firstLine(resultText(result.content), CLI_RESULT_LINE_CHARS)}`,
      );
    }
    this.#drawSpinner();
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

  /** Keeps track of which calls of the latest model message an event has settled on screen. */
  #track(event: ConversationEventItem): void {
    if (event.type === 'messageEnd') {
      this.#batch =
        event.toolCalls.length > 0
          ? { turn: event.turn, calls: event.toolCalls, settled: new Set() }
          : undefined;
      return;
    }
    const settled = this.#batch?.settled;
    if (!settled) return;
    if (event.type === 'toolEnd' && !event.willRetry) settled.add(event.toolCallId);
    // An approved call starts and ends as usual; a denied one was shown as denied.
    if (event.type === 'approvalRequested') settled.add(event.approval.toolCallId);
  }

  #resolved(outcome: ApprovalOutcome): void {
    const key = outcome.approvalId;
    this.#outcomes.set(key, outcome);
    const approval = this.#openApprovals.get(key);
    this.#openApprovals.delete(key);
    if (this.#decidingHere.has(key)) return;
    this.#questions.get(key)?.abort();
    const verdict = outcome.approved ? 'approved' : 'denied';
    if (outcome.decidedBy === 'timeout') {
      this.#line(`  ⏱ ${outcome.toolCallId} ${verdict}: ${outcome.reason ?? 'timed out'}`);
    } else if (approval && outcome.decidedBy === 'person') {
      this.#line(`  ${verdict} ${describeOutcome(outcome, approval.toolName)}`);
    }
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
    if (this.#openApprovals.has(key) || this.#outcomes.has(key)) return;
    this.#openApprovals.set(key, approval);
    this.#approvals = this.#approvals.then(() => this.#ask(approval, key));
  }

  async #ask(approval: PendingApproval, key: string): Promise<void> {
    // Settled while earlier questions were open (a timeout, another client): nothing left to answer.
    if (!this.#openApprovals.has(key)) return;
    this.#endText();
    this.stop();
    const call = `${approval.toolName}(${JSON.stringify(approval.args)})`;
    const asker = approval.subAgent ? ` (asked by sub-agent ${approval.subAgent.agent})` : '';
    this.#line(`? ${call}${asker} needs your approval: ${approval.reason} [approval ${key}]`);
    // From here the question is on the last row: no spinner, and lines go above it.
    this.#asking += 1;
    const withdrawn = new AbortController();
    this.#questions.set(key, withdrawn);
    try {
      const approved = await this.#options.askApproval(approval, withdrawn.signal);
      this.#questions.delete(key);
      if (approved === null || withdrawn.signal.aborted) return;
      this.#decidingHere.add(key);
      try {
        await this.#options.decide(approval, approved);
        this.#line(`  ${approved ? 'approved' : 'denied'} ${approval.toolName}`);
      } catch (error) {
        const outcome = this.#outcomes.get(key);
        this.#line(
          outcome
            ? `  ${outcome.approved ? 'approved' : 'denied'} ${describeOutcome(outcome, approval.toolName)}; your answer came too late`
            : `  (could not answer: ${describeThrown(error)})`,
        );
      } finally {
        this.#decidingHere.delete(key);
      }
    } finally {
      this.#questions.delete(key);
      this.#asking -= 1;
      this.#drawSpinner();
    }
  }

  #drawSpinner(): void {
    if (!this.#options.interactive || this.#asking > 0) return;
    if (this.#tools.size === 0) {
      this.stop();
      return;
    }
    this.#timer ??= setInterval(() => this.#drawSpinner(), SPIN_INTERVAL_MS);
    const tools = this.#runningInModelOrder()
      .map((tool) => (tool.progress ? `${tool.summary} · ${tool.progress}` : tool.summary))
      .join('  |  ');
    const frame = SPINNER[this.#frame++ % SPINNER.length];
    this.#write(`\r\x1b[2K${frame} ${tools}`);
    this.#spinnerShown = true;
  }

  /** The running tools in the order the model asked for them, not the order they started in. */
  #runningInModelOrder(): RunningTool[] {
    const order = (this.#batch?.calls ?? []).map((call) => call.id);
    const rank = (id: string): number => {
      const at = order.indexOf(id);
      return at < 0 ? order.length : at;
    };
    return [...this.#tools.entries()].sort(([a], [b]) => rank(a) - rank(b)).map(([, tool]) => tool);
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
    if (this.#asking > 0 && this.#options.interactive) {
      // A question is on the last row: the line goes above it, and the question is drawn again.
      this.#write(`\r\x1b[2K${text}\n`);
      this.#options.redrawPrompt?.();
      return;
    }
    this.#write(`${text}\n`);
  }

  #write(text: string): void {
    this.#options.output.write(text);
  }
}

/** Who settled an approval, as the chat that did not settle it says it: `transferMoney elsewhere (…)`. */
function describeOutcome(outcome: ApprovalOutcome, toolName: string): string {
  const reason = outcome.reason ? `: ${outcome.reason}` : '';
  switch (outcome.decidedBy) {
    case 'person':
      return outcome.decider
        ? `${toolName} by ${outcome.decider}${reason}`
        : `${toolName} elsewhere (by another client, e.g. yiem approve)${reason}`;
    case 'timeout':
      return `${toolName} by its approval timeout${reason}`;
    case 'cancelled':
      return `${toolName}: the turn was cancelled`;
  }
}

/** `{ status: 'Downloading', percent: 40 }` → `status: Downloading, percent: 40`. */
function describeProgress(partial: Record<string, unknown>): string {
  return Object.entries(partial)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}

/** ✓ done, ✗ failed, ? an at-most-once call that may or may not have taken effect. */
function toolEndMark(event: { isError: boolean; outcome?: InterruptedCallOutcome }): string {
  if (event.outcome === 'unknown') return '?';
  return event.isError ? '✗' : '✓';
}
