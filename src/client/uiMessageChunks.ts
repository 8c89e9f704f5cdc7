import { resultText } from '../contract/toolResult.ts';
import type { ConversationEvent } from '../contract/types/events.ts';
import type {
  AgentToolCall,
  Message,
  MessageDelivery,
  ToolResultMessage,
} from '../contract/types/messages.ts';
import type { TurnResult, TurnStatus } from '../contract/types/turns.ts';

/**
 * The AI SDK's UI message stream protocol, as `ai@6` speaks it (`UIMessageChunk` in its types, the
 * response header `x-vercel-ai-ui-message-stream: v1`). Only the chunks a conversation produces are
 * written here; test/integration/chatEndpoint.test.ts checks them against `ai`'s own types and client.
 */
export const UI_MESSAGE_STREAM_PROTOCOL = {
  /** The response header that tells the AI SDK's client which protocol the body speaks. */
  header: 'x-vercel-ai-ui-message-stream',
  /** The header's value: the protocol's version. */
  version: 'v1',
} as const;

/** What a tool part's `output` holds: a result's text, or (preliminary) a tool's reported progress. */
export type ChatToolOutput =
  | {
      /** The tool result's text, whole once the batch ends. */
      text: string;
    }
  | {
      /** What the tool passed to `onPartialResult`, shown while it runs. */
      progress: Record<string, unknown>;
    };

/** What the endpoint puts into an assistant message's `metadata.yiem`, to continue the turn by. */
export interface ChatMessageMetadata {
  /** Under its own key, so that an application's metadata next to it is left alone. */
  yiem: {
    /** The conversation the message came from. */
    conversationId: string;
    /** The turn it answers. */
    turn: number;
    /** The event offset the next response of this turn continues from. */
    offset: number;
  };
}

/**
 * A message was queued while the followed turn ran (the `messageQueued` event); `turn` is that turn,
 * `text` the message's first line, cut short.
 */
export interface ChatMessageQueued {
  /** The message's number in the conversation, from 1. */
  messageId: number;
  /** How it joins the running turn. */
  delivery: MessageDelivery;
  /** Its first line, cut short. */
  text: string;
  /** The turn that was running. */
  turn: number;
}

/**
 * A queued message joined turn `turn` after its `afterModelCall`-th model call (0: it opened the
 * turn); the `messageDelivered` event.
 */
export interface ChatMessageDelivered {
  /** The message, as `ChatMessageQueued` numbered it. */
  messageId: number;
  /** How it joined. */
  delivery: MessageDelivery;
  /** The turn it joined. */
  turn: number;
  /** The model calls of the turn before it was read (0: it opened the turn). */
  afterModelCall: number;
  /** The tool calls an `'interrupt'` message cut short on its way; absent when none. */
  interruptedCalls?: number;
}

/** How a turn's status reads as the AI SDK's finish reason. */
export type ChatFinishReason = 'stop' | 'length' | 'content-filter' | 'error' | 'other';

/**
 * The UI message stream chunks a conversation's turn becomes. The fields are the AI SDK's
 * (`UIMessageChunk` of `ai@6`), where each is described; `type` names the chunk.
 */
export type UiMessageChunk =
  | {
      type: 'start';
      /** The assistant message's id (`<conversation>-turn-<n>`), when the endpoint names messages. */
      messageId?: string;
    }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | {
      type: 'text-start';
      /** The text part's id, which its deltas and end name. */
      id: string;
    }
  | {
      type: 'text-delta';
      /** The text part the delta belongs to. */
      id: string;
      /** The new text. */
      delta: string;
    }
  | {
      type: 'text-end';
      /** The text part that is complete. */
      id: string;
    }
  | {
      type: 'tool-input-available';
      /** The tool part's id: the model's call id, made unique in the turn. */
      toolCallId: string;
      /** The tool called. */
      toolName: string;
      /** The call's arguments. */
      input: unknown;
    }
  | {
      type: 'tool-approval-request';
      /** The approval id to answer with (`Conversation.approve`). */
      approvalId: string;
      /** The tool part that waits. */
      toolCallId: string;
    }
  | {
      type: 'tool-output-available';
      /** The tool part. */
      toolCallId: string;
      /** Its result, or its progress while `preliminary`. */
      output: ChatToolOutput;
      /** True for progress: a later output replaces it. */
      preliminary?: boolean;
    }
  | {
      type: 'tool-output-error';
      /** The tool part. */
      toolCallId: string;
      /** The error the model read. */
      errorText: string;
    }
  | {
      type: 'tool-output-denied';
      /** The tool part whose approval was denied. */
      toolCallId: string;
    }
  | {
      type: 'error';
      /** Why the stream could not go on. */
      errorText: string;
    }
  // Transient data parts: `useChat` hands them to `onData` and keeps them out of the message, since
  // the user's messages are the transcript's, not parts of the assistant's reply.
  | {
      type: 'data-yiem-message-queued';
      /** The queued message. */
      data: ChatMessageQueued;
      /** Always true: kept out of the message. */
      transient: true;
    }
  | {
      type: 'data-yiem-message-delivered';
      /** The delivered message. */
      data: ChatMessageDelivered;
      /** Always true: kept out of the message. */
      transient: true;
    }
  | {
      type: 'finish';
      /** How the turn ended (`'other'` while it has not: the stream stopped at a wait, e.g. an approval). */
      finishReason?: ChatFinishReason;
      /** Where to continue the turn from. */
      messageMetadata?: ChatMessageMetadata;
    };

/** The part of a transcript the translation reads: the model's tool calls and their results. */
export interface TranscriptWindow {
  /** The transcript's length now. */
  count(): Promise<number>;
  /** Up to `limit` messages from `fromIndex` on, whole. */
  read(fromIndex: number, limit: number): Promise<Message[]>;
}

/** Messages read at a time while looking for a model reply in the transcript. */
const TRANSCRIPT_SEARCH_PAGE = 50;

interface BatchCall {
  /** The model's id, which events name. */
  modelId: string;
  name: string;
  /** The tool part's id: the model's, made unique in the turn (models may repeat ids). */
  partId: string;
  input: unknown;
  shown: boolean;
  /** A final output, error or denial was sent. */
  settled: boolean;
  /** The final text sent, to send the whole result at the batch's end if it was cut. */
  text?: string;
  denied?: boolean;
}

interface Batch {
  calls: BatchCall[];
  /** Where the model's reply with these calls is in the transcript, once looked up. */
  replyIndex?: number;
}

const FINISH_REASONS: Record<TurnStatus, ChatFinishReason> = {
  completed: 'stop',
  terminated: 'stop',
  limitReached: 'length',
  budgetExhausted: 'length',
  guardrailTripped: 'content-filter',
  failed: 'error',
  cancelled: 'other',
};

export function finishReason(result: TurnResult | undefined): ChatFinishReason {
  return result ? FINISH_REASONS[result.status] : 'other';
}

/**
 * Turns one conversation's events, in order, into UI message chunks: each model call a step, its
 * text a text part, each tool call a tool part (input, progress as preliminary output, output or
 * error, approval asked and denied). A batch's calls show in the model's order (a call's first event
 * shows the calls before it too); progress and outputs as they happen. Events carry no tool arguments and only
 * the first line of a result, so the model's calls and the whole results are read from the transcript
 * when the batch shows and when it ends. The same events give the same chunks, so a replay of a
 * turn rebuilds the message the first stream built.
 */
export class TurnTranslator {
  readonly #transcript: TranscriptWindow;
  /** Where to look forward from for the next model reply; unknown, it is looked for from the end. */
  #cursor: number | undefined;
  #turn: number | undefined;
  #modelCall = 0;
  #attempt = 1;
  #stepOpen = false;
  #textId: string | undefined;
  #batch: Batch | undefined;
  readonly #partIds = new Set<string>();
  /** Approvals asked and not settled, by approval id. */
  readonly openApprovals = new Map<string, BatchCall>();
  /** Tool parts whose call runs now (started, not ended). */
  readonly running = new Set<string>();
  /** The result of the turn, once it ended. */
  ended: TurnResult | undefined;

  constructor(transcript: TranscriptWindow, cursor?: number) {
    this.#transcript = transcript;
    this.#cursor = cursor;
  }

  get turn(): number | undefined {
    return this.#turn;
  }

  async translate(event: ConversationEvent): Promise<UiMessageChunk[]> {
    // A sub-agent's approvals carry its own turn and tool calls: they have no part in this message.
    if (event.type === 'approvalRequested' && event.approval.subAgent) return [];
    if (event.type === 'approvalResolved' && !this.openApprovals.has(event.outcome.approvalId)) return [];
    if (event.type === 'turnStart') return this.#startTurn(event.turn);
    if (event.type === 'messageQueued' || event.type === 'messageDelivered') return messageChunks(event);
    if (this.#turn === undefined) this.#turn = event.turn;
    else if (event.turn !== this.#turn) return [];
    switch (event.type) {
      case 'messageStart':
        return this.#startModelCall(event.attempt);
      case 'textDelta':
        return this.#text(event);
      case 'messageEnd':
        if (event.toolCalls.length > 0) this.#batch = this.#newBatch(event.toolCalls);
        return this.#endText();
      case 'toolStart':
      case 'toolProgress':
      case 'toolEnd':
      case 'approvalRequested':
      case 'callbackRequested':
        return this.#callEvent(event);
      case 'approvalResolved':
        return this.#approvalResolved(event);
      case 'handoff':
      case 'compaction':
      case 'modelFallback':
      case 'turnResumed':
      // A trip's error comes with the turn's end; a rewrite's text is in the transcript.
      case 'guardrailRewrote':
      case 'guardrailTripped':
        return [];
      case 'turnStopped':
        // The turn waits at a safe point until it is resumed: its stream stays open meanwhile.
        return this.#endText();
      case 'turnEnd':
        return this.#endTurn(event);
    }
  }

  #text(event: Extract<ConversationEvent, { type: 'textDelta' }>): UiMessageChunk[] {
    if (event.text === '') return [];
    const chunks: UiMessageChunk[] = [];
    if (!this.#textId) {
      this.#textId = `text-${event.turn}-${this.#modelCall}-${this.#attempt}`;
      chunks.push({ type: 'text-start', id: this.#textId });
    }
    chunks.push({ type: 'text-delta', id: this.#textId, delta: event.text });
    return chunks;
  }

  /** An event of one tool call of the batch: its part shows (with the calls before it), then changes. */
  async #callEvent(event: CallEvent): Promise<UiMessageChunk[]> {
    const call = this.#call(callIdOf(event));
    if (!call) return [];
    // What the call is doing is known before its part shows (which may read the transcript).
    if (event.type === 'toolStart') this.running.add(call.partId);
    if (event.type === 'toolEnd') this.running.delete(call.partId);
    if (event.type === 'toolEnd' && event.willRetry) return [];
    if (event.type === 'approvalRequested') this.openApprovals.set(event.approval.approvalId, call);
    const shown = await this.#showThrough(call);
    switch (event.type) {
      case 'toolProgress': {
        const output: ChatToolOutput = { progress: event.partialResult };
        return [
          ...shown,
          { type: 'tool-output-available', toolCallId: call.partId, output, preliminary: true },
        ];
      }
      case 'toolEnd':
        return [...shown, ...this.#settle(call, event.text, event.isError)];
      case 'approvalRequested':
        return [
          ...shown,
          { type: 'tool-approval-request', approvalId: event.approval.approvalId, toolCallId: call.partId },
        ];
      default:
        return shown;
    }
  }

  #approvalResolved(event: Extract<ConversationEvent, { type: 'approvalResolved' }>): UiMessageChunk[] {
    const call = this.openApprovals.get(event.outcome.approvalId) as BatchCall;
    this.openApprovals.delete(event.outcome.approvalId);
    if (event.outcome.approved) return [];
    call.settled = true;
    call.denied = true;
    return [{ type: 'tool-output-denied', toolCallId: call.partId }];
  }

  async #endTurn(event: Extract<ConversationEvent, { type: 'turnEnd' }>): Promise<UiMessageChunk[]> {
    const chunks = [...(await this.#endBatch()), ...this.#endText(), ...this.#endStep()];
    this.ended = event.result;
    const { error, status, budget } = event.result;
    if (error && (status === 'failed' || status === 'limitReached' || status === 'guardrailTripped'))
      chunks.push({ type: 'error', errorText: error });
    if (status === 'budgetExhausted' && budget) {
      chunks.push({
        type: 'error',
        errorText: `The turn stopped at its ${budget.scope} budget: ${budget.limit} ${budget.spent} of ${budget.allowed}. Raise it and resume, or cancel the turn.`,
      });
    }
    return chunks;
  }

  async #startTurn(turn: number): Promise<UiMessageChunk[]> {
    // A response that began in another turn's tail ends that turn's parts before this one's.
    const chunks =
      this.#turn === undefined || this.ended ? [] : [...(await this.#endBatch()), ...this.#endText()];
    this.#turn = turn;
    this.#modelCall = 0;
    this.ended = undefined;
    return chunks;
  }

  async #startModelCall(attempt: number): Promise<UiMessageChunk[]> {
    // A retried attempt streams its text again: the failed attempt's part ends where it stopped.
    if (attempt > 1) {
      this.#attempt = attempt;
      return this.#endText();
    }
    const chunks = [...(await this.#endBatch()), ...this.#endText(), ...this.#endStep()];
    this.#modelCall += 1;
    this.#attempt = 1;
    this.#stepOpen = true;
    chunks.push({ type: 'start-step' });
    return chunks;
  }

  #endText(): UiMessageChunk[] {
    if (!this.#textId) return [];
    const id = this.#textId;
    this.#textId = undefined;
    return [{ type: 'text-end', id }];
  }

  #endStep(): UiMessageChunk[] {
    if (!this.#stepOpen) return [];
    this.#stepOpen = false;
    return [{ type: 'finish-step' }];
  }

  #newBatch(calls: readonly { id: string; name: string }[]): Batch {
    return {
      calls: calls.map(({ id, name }) => {
        let partId = id;
        for (let n = 2; this.#partIds.has(partId); n++) partId = `${id}-${n}`;
        this.#partIds.add(partId);
        return { modelId: id, name, partId, input: {}, shown: false, settled: false };
      }),
    };
  }

  /** The batch's call an event names: the first unsettled one with that id (ids may repeat). */
  #call(toolCallId: string): BatchCall | undefined {
    const calls = this.#batch?.calls ?? [];
    return (
      calls.find((call) => call.modelId === toolCallId && !call.settled) ??
      calls.find((call) => call.modelId === toolCallId)
    );
  }

  /**
   * `call` and every call the model asked for before it that is not shown yet, in the model's order:
   * parallel calls keep the order the model gave them whichever starts first. Later calls wait for
   * their own events, since one that waits behind an approval must not stand unanswered in the
   * message the person's answer completes (`lastAssistantMessageIsCompleteWithApprovalResponses`).
   */
  async #showThrough(call: BatchCall): Promise<UiMessageChunk[]> {
    const batch = this.#batch;
    if (!batch || call.shown) return [];
    await this.#readCalls(batch);
    const through = batch.calls.indexOf(call);
    return batch.calls
      .slice(0, through + 1)
      .filter((each) => !each.shown)
      .map((each) => this.#inputPart(each));
  }

  /**
   * The shown calls of the batch that have yet to run or end: neither settled, running, nor waiting
   * for approval, nor among `answeredInPrepare` (which never start). Their events are still to come.
   */
  callsToCome(answeredInPrepare: readonly string[]): number {
    const asked = new Set([...this.openApprovals.values()]);
    return (this.#batch?.calls ?? []).filter(
      (call) =>
        call.shown &&
        !call.settled &&
        !asked.has(call) &&
        !this.running.has(call.partId) &&
        !answeredInPrepare.includes(call.modelId),
    ).length;
  }

  #inputPart(call: BatchCall): UiMessageChunk {
    call.shown = true;
    return {
      type: 'tool-input-available',
      toolCallId: call.partId,
      toolName: call.name,
      input: call.input,
    };
  }

  #settle(call: BatchCall, text: string, isError: boolean): UiMessageChunk[] {
    call.settled = true;
    call.text = text;
    return isError
      ? [{ type: 'tool-output-error', toolCallId: call.partId, errorText: text }]
      : [{ type: 'tool-output-available', toolCallId: call.partId, output: { text } }];
  }

  /**
   * The batch is over (the next model call starts, or the turn ends), so its results are in the
   * transcript: calls no event settled (answered in PREPARE, failed for good, cancelled) get theirs,
   * and results the events cut short are sent whole.
   */
  async #endBatch(): Promise<UiMessageChunk[]> {
    const batch = this.#batch;
    if (!batch) return [];
    this.#batch = undefined;
    await this.#readCalls(batch);
    const results =
      batch.replyIndex === undefined
        ? []
        : (await this.#transcript.read(batch.replyIndex + 1, batch.calls.length)).filter(
            (message): message is ToolResultMessage => message.role === 'toolResult',
          );
    if (batch.replyIndex !== undefined) this.#cursor = batch.replyIndex + 1 + results.length;
    const chunks: UiMessageChunk[] = [];
    batch.calls.forEach((call, index) => {
      this.running.delete(call.partId);
      if (call.denied) return;
      const result =
        results[index]?.toolCallId === call.modelId
          ? results[index]
          : results.find((message) => message.toolCallId === call.modelId);
      const text = result ? resultText(result.content) : 'The call ended without a result.';
      if (call.settled && call.text === text) return;
      if (!call.shown) chunks.push(this.#inputPart(call));
      chunks.push(...this.#settle(call, text, result?.isError ?? true));
    });
    return chunks;
  }

  /** Fills in the batch's arguments from the model's reply in the transcript, once per batch. */
  async #readCalls(batch = this.#batch): Promise<void> {
    if (!batch || batch.replyIndex !== undefined) return;
    const found = await this.#findReply(batch.calls.map((call) => call.modelId));
    if (!found) return;
    batch.replyIndex = found.index;
    this.#cursor = found.index + 1;
    batch.calls.forEach((call, index) => {
      call.input = found.toolCalls[index]?.arguments ?? {};
    });
  }

  /**
   * The model's reply with these tool call ids. Forward from the cursor when it is known (the
   * turn's first message, or past the previous batch); otherwise the latest such reply, which is
   * this turn's unless the model repeated ids within the turn.
   */
  async #findReply(ids: string[]): Promise<{ index: number; toolCalls: AgentToolCall[] } | undefined> {
    const matches = (message: Message | undefined): message is Message & { role: 'assistant' } =>
      message?.role === 'assistant' &&
      message.toolCalls.length === ids.length &&
      message.toolCalls.every((call, index) => call.id === ids[index]);
    if (this.#cursor !== undefined) {
      for (let from = this.#cursor; ; from += TRANSCRIPT_SEARCH_PAGE) {
        const page = await this.#transcript.read(from, TRANSCRIPT_SEARCH_PAGE);
        const at = page.findIndex(matches);
        const message = page[at];
        if (matches(message)) return { index: from + at, toolCalls: message.toolCalls };
        if (page.length < TRANSCRIPT_SEARCH_PAGE) return undefined;
      }
    }
    for (let end = await this.#transcript.count(); end > 0; end -= TRANSCRIPT_SEARCH_PAGE) {
      const from = Math.max(0, end - TRANSCRIPT_SEARCH_PAGE);
      const page = await this.#transcript.read(from, end - from);
      const at = page.findLastIndex(matches);
      const message = page[at];
      if (matches(message)) return { index: from + at, toolCalls: message.toolCalls };
    }
    return undefined;
  }
}

type CallEvent = Extract<
  ConversationEvent,
  { type: 'toolStart' | 'toolProgress' | 'toolEnd' | 'approvalRequested' | 'callbackRequested' }
>;

function callIdOf(event: CallEvent): string {
  if (event.type === 'approvalRequested') return event.approval.toolCallId;
  if (event.type === 'callbackRequested') return event.callback.toolCallId;
  return event.toolCallId;
}

/** Messages sent during a turn are told as they queue and join, for a client to show where they went. */
function messageChunks(
  event: Extract<ConversationEvent, { type: 'messageQueued' | 'messageDelivered' }>,
): UiMessageChunk[] {
  if (event.type === 'messageQueued') {
    const { messageId, delivery, text, turn } = event;
    return [{ type: 'data-yiem-message-queued', data: { messageId, delivery, text, turn }, transient: true }];
  }
  const { messageId, delivery, turn, afterModelCall, interruptedCalls } = event;
  const data: ChatMessageDelivered = { messageId, delivery, turn, afterModelCall };
  if (interruptedCalls !== undefined) data.interruptedCalls = interruptedCalls;
  return [{ type: 'data-yiem-message-delivered', data, transient: true }];
}
