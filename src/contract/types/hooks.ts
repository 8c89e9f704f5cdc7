/**
 * Tool hooks (layer 6): worker-side `beforeToolCall` and `afterToolCall` around every tool call.
 */

import type { ToolArguments } from './base.ts';
import type { AgentTool, AgentToolResult } from './tools.ts';

/** Passed to `beforeToolCall` once a call has been found and its arguments validated. */
export interface BeforeToolCallContext {
  /** The conversation whose turn made the call. */
  conversationId: string;
  /** The model's id for the call. */
  toolCallId: string;
  /** The tool called. */
  toolName: string;
  /** The arguments, prepared and validated. */
  args: ToolArguments;
  /** The tool itself, to decide by its declaration (e.g. `requiresApproval`, `atMostOnce`). */
  tool: AgentTool;
}

/**
 * Returning `{ block: true, reason }` stops the call; the reason goes back to the model. Returning
 * `{ requireApproval: true, reason }` makes the call wait for a person's approval; the reason is shown
 * to them.
 */
export interface BeforeToolCallResult {
  /** True stops the call: the model reads `reason` as its error result. Default false. */
  block?: boolean;
  /** True makes the call wait for a person's approval, whatever the tool declares. Default false. */
  requireApproval?: boolean;
  /** Why: what the model reads for a block, what the approver sees for an approval. */
  reason?: string;
}

/** Passed to `afterToolCall` once `execute` has returned or thrown. */
export interface AfterToolCallContext {
  /** The conversation whose turn made the call. */
  conversationId: string;
  /** The model's id for the call. */
  toolCallId: string;
  /** The tool called. */
  toolName: string;
  /** The arguments `execute` was given. */
  args: ToolArguments;
  /** What `execute` returned, or the error result it threw. */
  result: AgentToolResult;
  /** True when `execute` threw (or timed out). */
  isError: boolean;
}

/** Fields `afterToolCall` may replace in the result the model receives. */
export type AfterToolCallResult = Partial<AgentToolResult> & {
  /** Makes the result an error for the model (true) or a success (false); absent: as it was. */
  isError?: boolean;
};

/**
 * Worker-side hooks around every tool call. They run inside activities, so they may do I/O; they
 * must not depend on running on a particular worker.
 */
export interface AgentHooks {
  /**
   * Runs in PREPARE, after validation and before any execution is scheduled. Return `{ block: true }`
   * to stop the call: it then never reaches `execute` and emits no `toolExecutionStart`.
   */
  beforeToolCall?: (
    context: BeforeToolCallContext,
  ) => BeforeToolCallResult | undefined | Promise<BeforeToolCallResult | undefined>;
  /**
   * Runs in FINALIZE, after `execute`. Whatever it returns replaces the matching fields of the result
   * (content, details, usage, terminate, isError). If it throws, the result becomes an error naming
   * the hook's error (as in pi-agent-core); the tool is not run again.
   */
  afterToolCall?: (
    context: AfterToolCallContext,
  ) => AfterToolCallResult | undefined | Promise<AfterToolCallResult | undefined>;
}
