import { CancellationScope, condition, getExternalWorkflowHandle, log } from '@temporalio/workflow';
import { forwardedDecisionSignal, subAgentApprovalSignal } from '../src/contract/definitions.ts';
import type { SubAgentApprovalMessage } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import type { ApprovalDecision, ApprovalOutcome, PendingApproval } from '../src/contract/types/approvals.ts';
import { countActions } from './actionMeter.ts';
import type { ConversationEvents } from './events.ts';

/**
 * A sub-agent's link to its parent conversation: every approval it waits for (its own, or one of its
 * own sub-agents') is told to the parent, so that the parent's clients see and decide it.
 */
export class ParentLink {
  readonly #parentId: string;
  readonly #ownId: string;

  constructor(parentId: string, ownId: string) {
    this.#parentId = parentId;
    this.#ownId = ownId;
  }

  requested(approval: PendingApproval): void {
    this.#send({ kind: 'requested', conversationId: this.#ownId, approval });
  }

  resolved(outcome: ApprovalOutcome): void {
    this.#send({ kind: 'resolved', conversationId: this.#ownId, outcome });
  }

  #send(message: SubAgentApprovalMessage): void {
    // Also when the sub-agent's turn is being cancelled: the parent must hear how the call ended.
    countActions();
    void CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(this.#parentId).signal(subAgentApprovalSignal, message),
    ).catch((error: unknown) =>
      log.warn('Could not tell the parent about an approval', { error: describeThrown(error) }),
    );
  }
}

interface Forwarded {
  approval: PendingApproval;
  child: string;
  /** The approval id the child knows the call by. */
  childKey: string;
}

/**
 * The approvals the sub-agents of the running turn wait for, as the parent shows them: their
 * `approvalId` is `<child conversation id>/<the child's approval id>`, so they never collide with the parent's own calls. A
 * decision made here is passed down to the child, which settles it and tells the parent.
 */
export class ForwardedApprovals {
  readonly #pending = new Map<string, Forwarded>();
  /** Outcomes a `decide` waits for. */
  readonly #outcomes = new Map<string, ApprovalOutcome | undefined>();
  /** The running sub-agents: child conversation id → agent name and the parent's turn. */
  readonly #children = new Map<string, { agent: string; turn: number }>();
  readonly #events: ConversationEvents;
  readonly #up: ParentLink | undefined;

  constructor(events: ConversationEvents, up: ParentLink | undefined) {
    this.#events = events;
    this.#up = up;
  }

  list(): PendingApproval[] {
    return [...this.#pending.values()].map((entry) => entry.approval);
  }

  has(key: string): boolean {
    return this.#pending.has(key);
  }

  /** A sub-agent is running: its approvals are welcome until `childEnded`. */
  childStarted(conversationId: string, agent: string, turn: number): void {
    this.#children.set(conversationId, { agent, turn });
  }

  /** What the child did not settle (it ended or was cancelled) nobody needs to answer any more. */
  childEnded(conversationId: string): void {
    this.#children.delete(conversationId);
    for (const [key, entry] of this.#pending) {
      if (entry.child !== conversationId) continue;
      this.#settle(key, entry.approval.turn, cancelledOutcome(key, entry.approval.toolCallId));
    }
  }

  receive(message: SubAgentApprovalMessage): void {
    const child = this.#children.get(message.conversationId);
    if (!child) return;
    if (message.kind === 'requested') {
      const childKey = message.approval.approvalId;
      const key = `${message.conversationId}/${childKey}`;
      const approval: PendingApproval = {
        ...message.approval,
        turn: child.turn,
        approvalId: key,
        // The agent that asks: the child, or, for one of the child's own sub-agents, that one.
        subAgent: message.approval.subAgent ?? {
          agent: child.agent,
          conversationId: message.conversationId,
          toolCallId: message.approval.toolCallId,
        },
      };
      this.#pending.set(key, { approval, child: message.conversationId, childKey });
      this.#events.publish(child.turn, { type: 'approvalRequested', approval });
      this.#up?.requested(approval);
      return;
    }
    const key = `${message.conversationId}/${message.outcome.approvalId}`;
    if (this.#pending.has(key)) this.#settle(key, child.turn, { ...message.outcome, approvalId: key });
  }

  /** Passes a person's decision down to the child and waits until the child has settled it. */
  async decide(decision: ApprovalDecision): Promise<ApprovalOutcome> {
    const key = decision.approvalId;
    const entry = this.#pending.get(key);
    this.#outcomes.set(key, undefined);
    if (entry) {
      countActions();
      await getExternalWorkflowHandle(entry.child).signal(forwardedDecisionSignal, {
        ...decision,
        approvalId: entry.childKey,
      });
    }
    await condition(() => this.#outcomes.get(key) !== undefined || !this.#pending.has(key));
    const outcome = this.#outcomes.get(key) ?? cancelledOutcome(key, entry?.approval.toolCallId ?? key);
    this.#outcomes.delete(key);
    return outcome;
  }

  #settle(key: string, turn: number, outcome: ApprovalOutcome): void {
    this.#pending.delete(key);
    if (this.#outcomes.has(key)) this.#outcomes.set(key, outcome);
    this.#events.publish(turn, { type: 'approvalResolved', outcome });
    this.#up?.resolved(outcome);
  }
}

function cancelledOutcome(approvalId: string, toolCallId: string): ApprovalOutcome {
  return { approvalId, toolCallId, approved: false, decidedBy: 'cancelled' };
}
