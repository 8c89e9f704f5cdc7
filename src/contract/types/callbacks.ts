/**
 * Callback tools (layer 1): a call an attached client runs (`Conversation.serveCallbacks`), and what
 * the client hands back.
 */

import type { ToolArguments } from './base.ts';

/** A callback tool call waiting for a client. */
export interface PendingCallback {
  /** Unique per call in this conversation: what the result is sent with. */
  callId: string;
  /** The turn that made the call. */
  turn: number;
  /** The model's id for the call. */
  toolCallId: string;
  /** The callback tool called: which handler runs it. */
  toolName: string;
  /** The call's arguments, validated against the tool's schema. */
  args: ToolArguments;
  /** When it was requested, milliseconds since 1970. */
  requestedAt: number;
  /** When the call gives up with an error to the model. */
  expiresAt: number;
}

/** What a client hands back for a callback tool call. */
export interface CallbackToolResult {
  /** What the model reads. Default: `output` as JSON. */
  text?: string;
  /** Structured result, checked against the tool's `outputSchema`; kept in the result's details. */
  output?: unknown;
  /** The call failed on the client; the model reads `text` as the error. */
  isError?: boolean;
}

/** The `callbackResult` Update's argument. */
export interface CallbackAnswer {
  /** The call answered (`PendingCallback.callId`). */
  callId: string;
  /** What the client's handler returned. */
  result: CallbackToolResult;
}

/** Runs a callback tool on the client. A throw reaches the model as an error result with its message. */
export type CallbackHandler = (
  args: ToolArguments,
  call: PendingCallback,
) => CallbackToolResult | Promise<CallbackToolResult>;
