/**
 * Turns (layer 4): how a turn ended, what it returns, and why a running turn stands still.
 */

import type { GuardrailTrip } from './guardrails.ts';
import type { BudgetExhaustion, Spend } from './spend.ts';

/**
 * How a turn ended. `budgetExhausted`: the turn stopped at a safe point because a limit of the
 * budget was reached (see `TurnResult.budget`); it waits there for `Conversation.raiseBudget` and
 * `resume()`, or `cancel()`. A sub-agent's turn ends with it instead of waiting.
 * `guardrailTripped`: a guardrail tripped on the user's message, the reply or a tool result (see
 * `TurnResult.guardrail`); the conversation takes the next message as usual.
 */
export type TurnStatus =
  | 'completed'
  | 'terminated'
  | 'failed'
  | 'limitReached'
  | 'cancelled'
  | 'budgetExhausted'
  | 'guardrailTripped';

/** The outcome of one turn: what `prompt` returns to the caller. */
export interface TurnResult {
  /** The turn's number, from 1. */
  turn: number;
  /** How it ended: completed, failed, cancelled, at a limit… */
  status: TurnStatus;
  /** The final assistant text, or the tool results' text when a tool terminated the turn. */
  reply: string;
  /** Why the turn failed or stopped early, in words a user can act on. */
  error?: string;
  /** Set with status `budgetExhausted`: the limit that was reached, and the figures. */
  budget?: BudgetExhaustion;
  /** Set with status `guardrailTripped`: which guardrail tripped, where, and why. */
  guardrail?: GuardrailTrip;
  /**
   * The results of the turn's tool calls given up because their worker died too often
   * (`maxWorkerDeaths`), as the model read them: the turn went on without them.
   */
  givenUp?: string[];
  /**
   * What the turn spent: model and tool calls, tokens, cost, wall time and the Temporal Cloud
   * Actions it used (from its message to its last status upsert). Absent from runs before the meter.
   */
  spend?: Spend;
}

/** Why a running turn stands still at a safe point. */
export type TurnStop =
  /** An operator paused the conversation (`Conversation.pause`). */
  | {
      reason: 'paused';
      /** When it stopped, milliseconds since 1970. */
      since: number;
    }
  /** A limit of the budget was reached. */
  | {
      reason: 'budgetExhausted';
      /** When it stopped, milliseconds since 1970. */
      since: number;
      /** Which limit, and the figures. */
      exhausted: BudgetExhaustion;
    };
