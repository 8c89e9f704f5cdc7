/**
 * Approvals (layer 1): a tool call waiting for a person, the answer, and how it was settled.
 */

import type { ToolArguments } from './base.ts';

/** What a conversation waits for a person to approve (`ConversationStatus.awaitingApproval`). */
export interface ApprovalWait {
  /** How many of its own tool calls wait. */
  ownCalls: number;
  /** The sub-agent conversations (by id) whose calls wait, oldest first. */
  subAgents: string[];
}

/** A tool call waiting for a person to approve or deny it. */
export interface PendingApproval {
  /**
   * What to answer it by: unique in the conversation, unlike `toolCallId` (models may repeat an id,
   * even within one batch). It is the call's activity id, `tool-<turn>-<toolCallId>` (with `-2`,
   * `-3`… for a repeated id), as the Web UI shows it.
   */
  approvalId: string;
  /** The turn that made the call. */
  turn: number;
  /** The model's id for the call. */
  toolCallId: string;
  /** The tool called. */
  toolName: string;
  /** The call's arguments, prepared and validated: what would run. */
  args: ToolArguments;
  /** Why approval is needed: the tool's flag or `beforeToolCall`'s reason. */
  reason: string;
  /** When it was requested, milliseconds since the epoch. */
  requestedAt: number;
  /** When the timeout policy applies, if there is a timeout. */
  expiresAt?: number;
  /**
   * Set when a sub-agent's call waits: `approvalId` is then `<child conversation id>/<the child's
   * approval id>`, the key to approve it by on this (the parent's) conversation, and this names the
   * agent that asks (a sub-agent's own sub-agent, too), its conversation and its tool call id there.
   */
  subAgent?: {
    /** The sub-agent's name. */
    agent: string;
    /** Its child conversation's id. */
    conversationId: string;
    /** The model's id for the call in that conversation. */
    toolCallId: string;
  };
}

/** A person's answer to a pending approval (the `decideToolCall` Update's argument). */
export interface ApprovalDecision {
  /**
   * The waiting call's `approvalId`. Its `toolCallId` is accepted too while no other waiting call
   * has the same one; otherwise the decision is refused with the approval ids to choose from.
   */
  approvalId: string;
  /** True lets the call run; false denies it, and the model reads the denial. */
  approve: boolean;
  /** Shown to the model with a denial. */
  reason?: string;
  /**
   * Who decides, as other clients name them (`yiem approve (alice@laptop)`); at most 200
   * characters (`MAX_DECIDER_CHARS`). `Conversation.approve`/`deny` send the Temporal client's
   * identity unless told otherwise.
   */
  decider?: string;
}

/**
 * How an approval was settled. Settled once: a decision that comes after the timeout policy applied
 * is refused, and one that arrives together with the timeout (in one workflow task) wins over it.
 */
export interface ApprovalOutcome {
  /** The approval settled (`PendingApproval.approvalId`). */
  approvalId: string;
  /** The model's id for the call. */
  toolCallId: string;
  /** Whether the call runs. */
  approved: boolean;
  /**
   * `'person'` when decided through the Update, `'timeout'` when the timeout policy applied,
   * `'cancelled'` when the turn was cancelled while the call waited.
   */
  decidedBy: 'person' | 'timeout' | 'cancelled';
  /** The reason given with the decision, shown to the model with a denial. */
  reason?: string;
  /** The decision's `decider`, when a person decided and it was named. */
  decider?: string;
}
