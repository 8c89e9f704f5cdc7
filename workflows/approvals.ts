import { msToNumber } from '@temporalio/common/lib/time.js';
import { condition } from '@temporalio/workflow';
import type { ApprovalDecision, ApprovalOutcome, PendingApproval, ToolArguments } from '../src/types.ts';
import type { ConversationEvents } from './events.ts';

export interface ApprovalPolicy {
  timeout: string | undefined;
  onTimeout: 'approve' | 'deny';
}

export interface ApprovalRequest {
  turn: number;
  toolCallId: string;
  toolName: string;
  args: ToolArguments;
  reason: string;
}

/**
 * Tool calls waiting for a person. The wait is a workflow condition, so it survives worker restarts;
 * the decision arrives as an Update and is recorded in history.
 */
export class Approvals {
  readonly #pending: PendingApproval[] = [];
  readonly #decided = new Map<string, ApprovalOutcome>();
  readonly #policy: ApprovalPolicy;
  readonly #events: ConversationEvents;

  constructor(policy: ApprovalPolicy, events: ConversationEvents) {
    this.#policy = policy;
    this.#events = events;
  }

  /** Oldest first. */
  list(): PendingApproval[] {
    return [...this.#pending];
  }

  /** Why a decision cannot be applied, or `null` when it can (the Update's validator). */
  problem(decision: ApprovalDecision): string | null {
    if (typeof decision?.toolCallId !== 'string' || typeof decision.approve !== 'boolean') {
      return 'A decision needs a toolCallId and approve: true or false';
    }
    if (!this.#pending.some((approval) => approval.toolCallId === decision.toolCallId)) {
      const waiting = this.#pending.map((approval) => approval.toolCallId).join(', ') || 'none';
      return `No tool call "${decision.toolCallId}" is waiting for approval (waiting: ${waiting})`;
    }
    return null;
  }

  decide(decision: ApprovalDecision): ApprovalOutcome {
    const outcome: ApprovalOutcome = {
      toolCallId: decision.toolCallId,
      approved: decision.approve,
      decidedBy: 'person',
      ...(decision.reason ? { reason: decision.reason } : {}),
    };
    this.#settle(outcome);
    return outcome;
  }

  /** Waits until a person decides, or the timeout policy applies. */
  async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
    const requestedAt = Date.now();
    const { timeout, onTimeout } = this.#policy;
    const approval: PendingApproval = {
      ...request,
      requestedAt,
      ...(timeout ? { expiresAt: requestedAt + msToNumber(timeout) } : {}),
    };
    this.#pending.push(approval);
    this.#events.publish(request.turn, { type: 'approvalRequested', approval });
    const decided = () => this.#decided.has(request.toolCallId);
    let inTime = true;
    try {
      if (timeout) inTime = await condition(decided, timeout);
      else await condition(decided);
    } catch (error) {
      // The turn was cancelled while the call waited: nobody needs to answer any more.
      this.#settle({ toolCallId: request.toolCallId, approved: false, decidedBy: 'cancelled' });
      this.#decided.delete(request.toolCallId);
      this.#events.publish(request.turn, {
        type: 'approvalResolved',
        outcome: { toolCallId: request.toolCallId, approved: false, decidedBy: 'cancelled' },
      });
      throw error;
    }
    if (!inTime) {
      this.#settle({
        toolCallId: request.toolCallId,
        approved: onTimeout === 'approve',
        decidedBy: 'timeout',
        reason: `nobody answered within ${timeout}`,
      });
    }
    const outcome = this.#decided.get(request.toolCallId) as ApprovalOutcome;
    this.#decided.delete(request.toolCallId);
    this.#events.publish(request.turn, { type: 'approvalResolved', outcome });
    return outcome;
  }

  #settle(outcome: ApprovalOutcome): void {
    const index = this.#pending.findIndex((approval) => approval.toolCallId === outcome.toolCallId);
    if (index >= 0) this.#pending.splice(index, 1);
    this.#decided.set(outcome.toolCallId, outcome);
  }
}
