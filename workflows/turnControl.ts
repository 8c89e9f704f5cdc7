import {
  addSpend,
  changedBudget,
  noSpend,
  reachedLimit,
  remaining,
  tighterLimits,
} from '../src/contract/budget.ts';
import type { ConversationCarryOver } from '../src/contract/protocol.ts';
import type { ConversationSearchStatus } from '../src/contract/searchAttributes.ts';
import type { PauseState } from '../src/contract/types/conversation.ts';
import type { AssistantMessage } from '../src/contract/types/messages.ts';
import type {
  Budget,
  BudgetChange,
  BudgetExhaustion,
  Spend,
  SpendLimits,
} from '../src/contract/types/spend.ts';
import type { TurnResult, TurnStop } from '../src/contract/types/turns.ts';

/** Patch of the budget stops and the `YiemCost` search attribute. */
export const BUDGETS_PATCH = 'yiem-budgets';
/** Patch of pausing. */
export const PAUSE_PATCH = 'yiem-pause';

/** What the step after a safe point would spend of the counted figures. */
export type NextStep = Partial<Pick<Spend, 'modelCalls' | 'toolCalls'>>;

/**
 * What decides, at a safe point, whether the running turn goes on: the budget with what the
 * conversation and the turn have spent, and an operator's pause. Plain bookkeeping; the waiting is
 * in safePoint.ts. Wall time runs while a turn works and stands still while it is stopped.
 */
export class TurnControl {
  budget: Budget;
  spend: Spend;
  turnSpend: Spend = noSpend();
  pause: PauseState | null;
  /** Set while the running turn stands at a safe point, with what its next step would spend. */
  stop: { stop: TurnStop; next: NextStep } | null = null;
  /** Set by `resume`: the stopped turn may go on. */
  resumeAsked = false;
  /** How many times a turn ended or stopped at its budget: what `resume` waits for. */
  outcomes = 0;
  lastOutcome: TurnResult | null = null;
  #turn = 0;
  /** Whether a turn is open: from its start to its last status upsert. */
  #turnOpen = false;
  /** Actions counted while no turn was open (the message that starts the next one): charged to the next turn. */
  #actionsBeforeTurn = 0;
  /** When the turn's wall clock last started; unset while no turn works. */
  #clockFrom: number | undefined;

  constructor(budget: Budget | undefined, carried: ConversationCarryOver | undefined) {
    this.budget = carried?.budget ?? budget ?? {};
    // Runs from before the meter carried no Actions.
    this.spend = { ...noSpend(), ...carried?.spend };
    this.pause = carried?.pause ?? null;
  }

  /** Whether the conversation has a budget at all. */
  get limited(): boolean {
    return Object.keys(this.budget).length > 0;
  }

  /** Brings the clock up to now, starting the turn's spend when `turn` is a new one. */
  tick(turn: number): void {
    const now = Date.now();
    if (turn !== this.#turn) {
      this.#turn = turn;
      this.turnSpend = { ...noSpend(), actions: this.#actionsBeforeTurn };
      this.#actionsBeforeTurn = 0;
      this.#turnOpen = true;
      this.#clockFrom = now;
    }
    if (this.#clockFrom !== undefined) this.#charge({ wallTimeSeconds: (now - this.#clockFrom) / 1000 });
    this.#clockFrom = now;
  }

  /** Stops the clock (a stopped or ended turn). */
  stopClock(turn: number): void {
    this.tick(turn);
    this.#clockFrom = undefined;
  }

  modelCalled(reply: Pick<AssistantMessage, 'usage'>): void {
    const { usage } = reply;
    this.#charge({
      modelCalls: 1,
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      cost: usage?.cost ?? 0,
    });
  }

  /** Actions counted by the meter (workflows/actionMeter.ts): the open turn's, else the next one's. */
  actionsCounted(actions: number): void {
    this.spend = addSpend(this.spend, { actions }, false);
    if (this.#turnOpen) this.turnSpend = addSpend(this.turnSpend, { actions }, false);
    else this.#actionsBeforeTurn += actions;
  }

  /** The turn's last Action (its `idle` upsert) is counted: what comes next is the next turn's. */
  turnClosed(): void {
    this.#turnOpen = false;
  }

  toolsCalled(count: number): void {
    this.#charge({ toolCalls: count });
  }

  /** A sub-agent's spend, once its task ended: its wall time ran within this turn's. */
  subAgentSpent(spend: Spend | undefined): void {
    if (spend) this.#charge(spend, false);
  }

  /** The limit the next step would reach: the turn's first, then the conversation's. */
  reached(next: NextStep): BudgetExhaustion | null {
    return (
      reachedLimit(this.turnSpend, this.budget.turn, 'turn', next) ??
      reachedLimit(this.spend, this.budget.conversation, 'conversation', next)
    );
  }

  /** What may still be spent, per limited figure: the smaller of the conversation's and the turn's rest. */
  remaining(): SpendLimits {
    return tighterLimits(
      remaining(this.spend, this.budget.conversation),
      remaining(this.turnSpend, this.budget.turn),
    );
  }

  /** A sub-agent's budget for one task: its own limits within what this conversation has left. */
  subAgentLimits(own: SpendLimits | undefined): SpendLimits {
    return tighterLimits(own ?? {}, this.remaining());
  }

  change(change: BudgetChange): Budget {
    this.budget = changedBudget(this.budget, change);
    return this.budget;
  }

  /** A turn ended: `resume` callers get its result. */
  settle(result: TurnResult): void {
    this.outcomes += 1;
    this.lastOutcome = result;
  }

  /** What the search attributes say for `status`: between turns, a paused conversation is `paused`. */
  shownStatus(status: ConversationSearchStatus): ConversationSearchStatus {
    return status === 'idle' && this.pause ? 'paused' : status;
  }

  carryOver(): Pick<ConversationCarryOver, 'spend' | 'budget' | 'pause'> {
    return {
      spend: this.spend,
      ...(this.limited ? { budget: this.budget } : {}),
      ...(this.pause ? { pause: this.pause } : {}),
    };
  }

  #charge(more: Partial<Spend>, withWallTime = true): void {
    this.spend = addSpend(this.spend, more, withWallTime);
    this.turnSpend = addSpend(this.turnSpend, more, withWallTime);
  }
}
