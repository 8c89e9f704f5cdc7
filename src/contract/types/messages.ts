/**
 * Transcript messages (layer 2): the user's messages, the model's replies with their tool calls,
 * tool results, and how a message is delivered. `GuardrailMark` is here rather than with the
 * guardrails because every message carries one and a guardrail reads a message: kept with the
 * guardrails it would close a circle.
 */

import type { TextContent, ToolArguments, Usage } from './base.ts';
import type { ModelFallback } from './models.ts';

/** One tool call the model asked for. */
export interface AgentToolCall {
  /** Always `'function'`, as in the Chat Completions API. */
  type: 'function';
  /** The model's id for the call, which its result names. */
  id: string;
  /** The tool asked for. */
  name: string;
  /** Parsed arguments; `{}` when they could not be parsed. */
  arguments: ToolArguments;
  /** Why the arguments could not be parsed, with the raw text; PREPARE turns it into an error result. */
  argumentsError?: string;
}

/** A user's message in the transcript. */
export interface UserMessage {
  /** Tells the three kinds of message apart. */
  role: 'user';
  /** The text the model reads (a guardrail's rewrite, when one rewrote it). */
  content: string;
  /** When it was added, in milliseconds since 1970 (the workflow's clock). */
  timestamp: number;
  /** How the message was sent (see `MessageDelivery`); absent in transcripts from before deliveries. */
  delivery?: MessageDelivery;
  /** The turn that answered it: the one whose model call first saw it. */
  turn?: number;
  /** What guardrails did to this message (see `GuardrailMark`); absent when none ran or all passed. */
  guardrail?: GuardrailMark;
}

/**
 * How a message sent while a turn runs reaches the agent. A message sent to an idle conversation
 * starts the next turn, whatever its delivery.
 * - `'steer'` (the default; pi-agent-core's `steer()`): joins the running turn at its next model call,
 *   never in the middle of a tool batch.
 * - `'followUp'` (pi-agent-core's `followUp()`): waits until the running turn has ended, then starts
 *   the next turn; the running turn's result does not answer it.
 * - `'interrupt'`: cancels the running tool batch, whose unfinished calls get an "interrupted by a new
 *   message" result (so the model sees a result for every call), and joins the next model call at
 *   once. Sent while the model is called, it stops the batch that call asks for before it starts.
 */
export type MessageDelivery = 'steer' | 'followUp' | 'interrupt';

/**
 * How a message is sent: the optional second argument of the `prompt` Update and the `post` Signal
 * (src/contract/definitions.ts), and the options of `Conversation.send` and `post`.
 */
export interface DeliveryOptions {
  /** Default `'steer'`. */
  delivery?: MessageDelivery;
  /**
   * Names the message so that it is added once, however often it is sent (a client that retries):
   * a message whose key the conversation has taken already (among its latest
   * `MAX_SEEN_MESSAGE_KEYS`, across continue-as-new) is not added again, and a `prompt` with it
   * waits for the turn that answers the first. At most `MAX_MESSAGE_KEY_CHARS` characters. A
   * `prompt` without one is named by its Update id.
   */
  key?: string;
}

/** A model reply in the transcript: its text and the tool calls it asked for. */
export interface AssistantMessage {
  /** Tells the three kinds of message apart. */
  role: 'assistant';
  /** The reply text; empty when the model only called tools. */
  content: string;
  /** The tool calls it asked for, in the model's order; empty for the turn's answer. */
  toolCalls: AgentToolCall[];
  /** The model that answered, by the worker's name for it (after any fallback). */
  model: string;
  /** The tokens (and cost, when prices are set) the call used; null when the endpoint did not say. */
  usage: Usage | null;
  /**
   * Why the model stopped: its answer, tool calls, its output limit (`'length'`: the reply may be
   * cut), or anything else the endpoint said.
   */
  stopReason: 'stop' | 'toolCalls' | 'length' | 'other';
  /** When it was added, in milliseconds since 1970 (the workflow's clock). */
  timestamp: number;
  /** What guardrails did to this reply (see `GuardrailMark`). */
  guardrail?: GuardrailMark;
  /** Set when the model asked for could not answer and a fallback did: each switch, in order. */
  fallbacks?: ModelFallback[];
}

/** A tool call's result in the transcript, as the model reads it. */
export interface ToolResultMessage {
  /** Tells the three kinds of message apart. */
  role: 'toolResult';
  /** The call it answers. */
  toolCallId: string;
  /** The tool called. */
  toolName: string;
  /** What the model reads. */
  content: TextContent[];
  /** The tool's structured data for applications; the model does not read it. */
  details: Record<string, unknown>;
  /** True when the call failed (or was blocked, denied, cancelled); the model reads it as an error. */
  isError: boolean;
  /** When it was added, in milliseconds since 1970 (the workflow's clock). */
  timestamp: number;
  /** What guardrails did to this result (see `GuardrailMark`). */
  guardrail?: GuardrailMark;
}

/** One entry of a conversation's transcript. The transcript is append-only. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * What guardrails did to a transcript entry. A user message keeps its `original` text beside the
 * rewrite the model read. A reply or tool result keeps only the rewrite: those guardrails exist to
 * keep text from the reader (a secret a tool returned, say); Temporal history still holds the
 * activity's output, so encrypt payloads (docs/encryption.md) where that matters. A user message or a
 * reply a guardrail tripped on, or could not check, is never sent to a model again; a tool result's
 * content becomes a note that it was withheld, so the model's call still has its result.
 */
export interface GuardrailMark {
  /** The guardrails that rewrote the text, in order. */
  rewrittenBy?: string[];
  /** A user message's text before the rewrites. */
  original?: string;
  /** The guardrail that tripped on it, and why. */
  tripped?: {
    /** The guardrail's name. */
    guardrail: string;
    /** What it said. */
    reason: string;
  };
  /** Why the guardrails could not check it (the error names the guardrail): the turn failed. */
  failed?: string;
}
