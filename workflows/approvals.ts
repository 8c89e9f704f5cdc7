import { msToNumber } from '@temporalio/common/lib/time.js';
import { MAX_DECIDER_CHARS } from '../src/contract/limits.ts';
import type { ApprovalPolicy } from '../src/contract/settings.ts';
import type { ApprovalDecision, ApprovalOutcome, PendingApproval } from '../src/contract/types/approvals.ts';
import type { ConversationEvents } from './events.ts';
import { namedWait } from './webUiRows.ts';

/** A call to ask about: the pending approval before the workflow stamps its times. */
export type ApprovalRequest = Omit<PendingApproval, 'requestedAt' | 'expiresAt'>;

/**
 * Tool calls waiting for a person. The wait is a workflow condition (and timer), so it survives worker restarts;
 * the decision arrives as an Update and is recorded in history. Calls are keyed by their approval id:
 * a model may give two calls of one batch the same tool call id.
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
    if (typeof decision?.approvalId !== 'string' || typeof decision.approve !== 'boolean') {
      return 'A decision needs an approvalId and approve: true or false';
    }
    const { decider } = decision;
    if (decider !== undefined && (typeof decider !== 'string' || decider.length > MAX_DECIDER_CHARS)) {
      return `A decision's decider must be a name of at most ${MAX_DECIDER_CHARS} characters`;
    }
    const found = this.#find(decision.approvalId);
    return typeof found === 'string' ? found : null;
  }

  /**
   * Settles a waiting call. Throws (failing the Update, not the workflow) when the call was settled
   * in the meantime, e.g. by its timeout in the same workflow task: a settled call is never changed.
   */
  decide(decision: ApprovalDecision): ApprovalOutcome {
    const approval = this.#find(decision.approvalId);
    if (typeof approval === 'string') throw new Error(approval);
    const outcome: ApprovalOutcome = {
      approvalId: approval.approvalId,
      toolCallId: approval.toolCallId,
      approved: decision.approve,
      decidedBy: 'person',
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...(decision.decider ? { decider: decision.decider } : {}),
    };
    this.#settle(outcome);
    return outcome;
  }

  /**
   * Waits until a person decides, or the timeout policy applies; the Web UI shows the wait as a
   * timer named after the call (`summary`) and its approval id.
   */
  async request(request: ApprovalRequest, summary = request.toolName): Promise<ApprovalOutcome> {
    const requestedAt = Date.now();
    const { timeout, onTimeout } = this.#policy;
    const { approvalId, toolCallId } = request;
    const approval: PendingApproval = {
      ...request,
      requestedAt,
      ...(timeout ? { expiresAt: requestedAt + msToNumber(timeout) } : {}),
    };
    this.#pending.push(approval);
    this.#events.publish(request.turn, { type: 'approvalRequested', approval });
    const decided = () => this.#decided.has(approvalId);
    try {
      await namedWait(decided, `awaiting approval: ${summary} · approval ${approvalId}`, timeout);
    } catch (error) {
      // The turn was cancelled while the call waited: nobody needs to answer any more.
      const outcome: ApprovalOutcome = { approvalId, toolCallId, approved: false, decidedBy: 'cancelled' };
      this.#settle(outcome);
      this.#decided.delete(approvalId);
      this.#events.publish(request.turn, { type: 'approvalResolved', outcome });
      throw error;
    }
    // A decision that arrived in the same workflow task as the timeout wins over it.
    if (!decided()) {
      this.#settle({
        approvalId,
        toolCallId,
        approved: onTimeout === 'approve',
        decidedBy: 'timeout',
        reason: `nobody answered within ${timeout}`,
      });
    }
    const outcome = this.#decided.get(approvalId) as ApprovalOutcome;
    this.#decided.delete(approvalId);
    this.#events.publish(request.turn, { type: 'approvalResolved', outcome });
    return outcome;
  }

  /**
   * The waiting call a decision names, or why there is none: by approval id, or by tool call id
   * when exactly one waiting call has it.
   */
  #find(id: string): PendingApproval | string {
    const byApprovalId = this.#pending.find((approval) => approval.approvalId === id);
    if (byApprovalId) return byApprovalId;
    const byToolCallId = this.#pending.filter((approval) => approval.toolCallId === id);
    const [only] = byToolCallId;
    if (only && byToolCallId.length === 1) return only;
    if (byToolCallId.length > 1) {
      const ids = byToolCallId.map((approval) => approval.approvalId).join(', ');
      return `Several calls with tool call id "${id}" are waiting; answer one by its approval id: ${ids}`;
    }
    const waiting =
      this.#pending
        .map((approval) => `${approval.approvalId} (${approval.toolName}, tool call ${approval.toolCallId})`)
        .join(', ') || 'none';
    return `No tool call "${id}" is waiting for approval (waiting: ${waiting})`;
  }

  #settle(outcome: ApprovalOutcome): void {
    const index = this.#pending.findIndex((approval) => approval.approvalId === outcome.approvalId);
    if (index >= 0) this.#pending.splice(index, 1);
    this.#decided.set(outcome.approvalId, outcome);
  }
}
