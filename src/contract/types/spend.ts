/**
 * Spend and budgets (layer 1): what a conversation or a turn has spent, its limits, and the limit a
 * turn reached. Plain figures; nothing here depends on another subject.
 */

/**
 * What a conversation or a turn has spent. A sub-agent's spend is added to its parent's when the
 * sub-agent's task ends (its wall time is not: it ran within the parent's).
 */
export interface Spend {
  /** Model calls made (a retried call counts once). */
  modelCalls: number;
  /** Tool calls run, including sub-agent calls; a call answered in PREPARE counts too. */
  toolCalls: number;
  /** Prompt tokens the model calls read, as the endpoints counted them. */
  inputTokens: number;
  /** Tokens the model calls wrote. */
  outputTokens: number;
  /** In the currency of the workers' price table (`ModelSettings.prices`); models without a price add 0. */
  cost: number;
  /** Seconds the turns worked, without the time they stood stopped at a safe point. */
  wallTimeSeconds: number;
  /**
   * Temporal Cloud Actions this conversation's runs asked for, counted as it asked for them by the
   * rule in `src/contract/actions.ts` (retries, heartbeats and Queries are billed but not counted).
   * A turn's include the message that started it and the status upserts around it; runs from
   * before the meter leave it out.
   */
  actions: number;
}

/** Limits on what may be spent, per figure of `Spend`; a figure left out has no limit. */
export type SpendLimits = Partial<Spend>;

/**
 * A conversation's budget (`ConversationOptions.budget`): limits on the whole conversation and on
 * each turn. Checked at safe points, before each model call and before each tool batch (never in the
 * middle of a batch), so a batch may go past a limit; a reached limit stops the turn there.
 */
export interface Budget {
  /** Limits on the whole conversation, its turns together. Default: none. */
  conversation?: SpendLimits;
  /** Limits on each turn alone. Default: none. */
  turn?: SpendLimits;
}

/**
 * A change of budget (`Conversation.raiseBudget`): each given figure replaces the limit, `null`
 * removes it; figures left out stay.
 */
export interface BudgetChange {
  /** New limits on the whole conversation. */
  conversation?: { [Figure in keyof Spend]?: number | null };
  /** New limits on each turn. */
  turn?: { [Figure in keyof Spend]?: number | null };
}

/** The limit a turn reached, and the figures. */
export interface BudgetExhaustion {
  /** Whether the conversation's limit or the turn's was reached. */
  scope: 'conversation' | 'turn';
  /** The figure whose limit was reached, e.g. `cost`. */
  limit: keyof Spend;
  /** The limit. */
  allowed: number;
  /** What that scope had spent when the turn stopped (with `toolCalls`: plus the batch it was about to run). */
  spent: Spend;
}
