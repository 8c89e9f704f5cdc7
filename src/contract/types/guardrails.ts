/**
 * Guardrails (layer 3): the checks themselves, what they decide, where they run and what a trip
 * records. What a guardrail did to one message (`GuardrailMark`) sits below, in messages.ts.
 */

import type { Message } from './messages.ts';

/*
 * Guardrails
 * ==========
 * Checks a worker registers (`AgentWorkerOptions.hooks.guardrails`) and conversations name
 * (`ConversationOptions.guardrails`): on the user's message before the model reads it (`input`),
 * on the model's final reply (`output`) and on each tool result before the model reads it
 * (`toolResult`). Each runs in the `runGuardrails` activity, so it may do I/O or call a model.
 */

/** Where a guardrail checks: the user's message, the model's final reply, or a tool result. */
export type GuardrailStage = 'input' | 'output' | 'toolResult';

/**
 * What a guardrail decides about one text: let it through; replace it (the next guardrail, and the
 * model or the user, read `text`); or trip, which ends the turn with status `guardrailTripped` and
 * `reason` (the OpenAI Agents SDK's tripwire).
 */
export type GuardrailVerdict =
  | { action: 'pass' }
  | {
      action: 'rewrite';
      /** The text the reader gets instead. */
      text: string;
    }
  | {
      action: 'trip';
      /** Why, which the turn's result and the `guardrailTripped` event carry. */
      reason: string;
    };

/** What a guardrail's `execute` is given besides the text. */
export interface GuardrailContext {
  /** The conversation the text is from. */
  conversationId: string;
  /** The turn it belongs to. */
  turn: number;
  /** Which text it is: a user message, the reply or a tool result. */
  stage: GuardrailStage;
  /** The whole message the text is from (a tool result's `toolName`, say). */
  message: Message;
  /** Aborts when the turn is cancelled or the activity times out. */
  signal: AbortSignal;
  /**
   * One call to one of the worker's models (`request.model`, by name as conversations name them;
   * its endpoint, key and settings, and its `AgentWorkerOptions.models.fallbacks` when it cannot answer):
   * a guardrail that asks a model to judge the text. Returns the reply's text.
   */
  complete(request: GuardrailModelRequest): Promise<string>;
}

/** A model call a guardrail makes (`GuardrailContext.complete`). */
export interface GuardrailModelRequest {
  /** The system prompt: what to judge and how to answer. */
  instructions: string;
  /** The user message of the call, typically the text being checked. */
  input: string;
  /**
   * A model the worker serves, by name (`AgentWorkerOptions.models.models`); another name fails the turn,
   * naming the ones it serves. Default: the worker's default model.
   */
  model?: string;
}

/**
 * A check of the text of messages. `execute` may be async; a throw is retried as the activity is
 * (the conversation's `modelPolicy`), and after the last attempt the turn fails with an error that
 * names the guardrail.
 */
export interface Guardrail {
  /** What conversations name it by (`ConversationOptions.guardrails`), unique within its stage. */
  name: string;
  /** Checks one text: passes it, rewrites it or trips (ends the turn). */
  execute(text: string, context: GuardrailContext): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** The guardrails a worker registers, by stage (`AgentWorkerOptions.hooks.guardrails`). */
export interface WorkerGuardrails {
  /** Run on each user message before the model reads it. */
  input?: Guardrail[];
  /** Run on the model's final reply (one without tool calls) before it becomes the turn's reply. */
  output?: Guardrail[];
  /** Run on each tool result before the model reads it. */
  toolResult?: Guardrail[];
}

/** The names of the worker's guardrails that apply, by stage, in the order they run. */
export interface GuardrailNames {
  /** Those that check each user message. Default: none. */
  input?: string[];
  /** Those that check the final reply. Default: none. */
  output?: string[];
  /** Those that check each tool result. Default: none. */
  toolResult?: string[];
}

/** Which guardrail tripped, where, and why (`TurnResult.guardrail`, the `guardrailTripped` event). */
export interface GuardrailTrip {
  /** Which text it tripped on: a user message, the reply or a tool result. */
  stage: GuardrailStage;
  /** The guardrail's name. */
  guardrail: string;
  /** What it said. */
  reason: string;
  /** Set for a tool result: the call whose result it tripped on. */
  toolCallId?: string;
}
