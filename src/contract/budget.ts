/**
 * Budgets: what a conversation and a turn have spent, what they may spend, and when a limit is
 * reached. Plain arithmetic on plain data, shared by the workflow (workflows/safePoint.ts), the
 * client (checking a budget before it is sent) and the CLI.
 */
import { actionsCost } from './actions.ts';
import type { Budget, BudgetChange, BudgetExhaustion, Spend, SpendLimits } from './types/spend.ts';

/** Every figure a budget can limit, in the order limits are checked and shown. */
export const SPEND_FIGURES = [
  'modelCalls',
  'toolCalls',
  'inputTokens',
  'outputTokens',
  'cost',
  'wallTimeSeconds',
  'actions',
] as const satisfies readonly (keyof Spend)[];

/** Figures counted per step: a step that would go past the limit does not start. */
const COUNTED: readonly (keyof Spend)[] = ['modelCalls', 'toolCalls'];

/** Figures that must be whole numbers in a limit. */
const WHOLE: readonly (keyof Spend)[] = [...COUNTED, 'actions'];

export function noSpend(): Spend {
  return {
    modelCalls: 0,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
    wallTimeSeconds: 0,
    actions: 0,
  };
}

/** `spend` plus `more`; a sub-agent's wall time is left out (`withWallTime: false`), since it ran within its caller's. */
export function addSpend(spend: Spend, more: Partial<Spend>, withWallTime = true): Spend {
  const sum = { ...spend };
  for (const figure of SPEND_FIGURES) {
    if (figure === 'wallTimeSeconds' && !withWallTime) continue;
    sum[figure] = (sum[figure] ?? 0) + (more[figure] ?? 0);
  }
  return sum;
}

/**
 * The first limit of `limits` that `spend` has reached before a step that would add `next`: a
 * counted figure (model calls, tool calls) when the step would go past it, a measured one (tokens,
 * cost, wall time, whose next amount is unknown) as soon as it is spent.
 */
export function reachedLimit(
  spend: Spend,
  limits: SpendLimits | undefined,
  scope: BudgetExhaustion['scope'],
  next: Partial<Pick<Spend, 'modelCalls' | 'toolCalls'>>,
): BudgetExhaustion | null {
  for (const limit of SPEND_FIGURES) {
    const allowed = limits?.[limit];
    if (allowed === undefined) continue;
    const counted = COUNTED.includes(limit);
    if (counted && next[limit as 'modelCalls' | 'toolCalls'] === undefined) continue;
    const reached = counted
      ? spend[limit] + (next[limit as 'modelCalls' | 'toolCalls'] ?? 0) > allowed
      : spend[limit] >= allowed;
    if (reached) return { scope, limit, allowed, spent: spend };
  }
  return null;
}

/** What is left of each limit of `limits` (never below 0). */
export function remaining(spend: Spend, limits: SpendLimits | undefined): SpendLimits {
  const left: SpendLimits = {};
  for (const figure of SPEND_FIGURES) {
    const allowed = limits?.[figure];
    if (allowed !== undefined) left[figure] = Math.max(0, allowed - spend[figure]);
  }
  return left;
}

/** Per figure, the smaller of two sets of limits. */
export function tighterLimits(a: SpendLimits, b: SpendLimits): SpendLimits {
  const limits: SpendLimits = { ...a };
  for (const figure of SPEND_FIGURES) {
    const other = b[figure];
    if (other !== undefined) limits[figure] = Math.min(limits[figure] ?? other, other);
  }
  return limits;
}

/** `budget` with `change` applied: given figures replace the limit, `null` removes it. */
export function changedBudget(budget: Budget, change: BudgetChange): Budget {
  const changed: Budget = {};
  for (const scope of ['conversation', 'turn'] as const) {
    const limits: SpendLimits = { ...budget[scope] };
    for (const [figure, value] of Object.entries(change[scope] ?? {})) {
      if (value === null) delete limits[figure as keyof Spend];
      else if (value !== undefined) limits[figure as keyof Spend] = value;
    }
    if (Object.keys(limits).length > 0) changed[scope] = limits;
  }
  return changed;
}

/** Why `budget` (a `Budget`, or a `BudgetChange` with `nullable`) is not one, or `null`. */
export function budgetProblem(budget: unknown, nullable = false): string | null {
  if (!isRecord(budget)) return 'a budget must be an object such as { turn: { cost: 0.5 } }';
  const problems: string[] = [];
  for (const [scope, limits] of Object.entries(budget)) {
    if (scope !== 'conversation' && scope !== 'turn') {
      problems.push(`"${scope}" is no budget scope (conversation, turn)`);
      continue;
    }
    if (limits === undefined) continue;
    if (!isRecord(limits)) {
      problems.push(`${scope} must be an object of limits`);
      continue;
    }
    for (const [figure, value] of Object.entries(limits)) {
      if (!(SPEND_FIGURES as readonly string[]).includes(figure)) {
        problems.push(`${scope}.${figure} is no budget figure (${SPEND_FIGURES.join(', ')})`);
      } else if (value === null && nullable) {
        // Removes the limit.
      } else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        problems.push(`${scope}.${figure} must be a number of at least 0, got ${JSON.stringify(value)}`);
      } else if (WHOLE.includes(figure as keyof Spend) && !Number.isInteger(value)) {
        problems.push(`${scope}.${figure} must be a whole number, got ${value}`);
      }
    }
  }
  return problems.length === 0 ? null : problems.join('; ');
}

const FIGURE_NAMES: Record<keyof Spend, string> = {
  modelCalls: 'model calls',
  toolCalls: 'tool calls',
  inputTokens: 'input tokens',
  outputTokens: 'output tokens',
  cost: 'cost',
  wallTimeSeconds: 'wall time (seconds)',
  actions: 'Temporal Actions',
};

/** What the user reads when a turn stops at its budget, with how to go on. */
export function exhaustionMessage(exhausted: BudgetExhaustion): string {
  const { scope, limit, allowed, spent } = exhausted;
  return (
    `The ${scope}'s budget of ${allowed} ${FIGURE_NAMES[limit]} is reached (spent ${formatFigure(limit, spent[limit])}). ` +
    'The turn stopped at a safe point: raise the budget and resume it (Conversation.raiseBudget, resume), or cancel it.'
  );
}

/**
 * `spend` in one line: `3 model calls · 2 tool calls · 1200 in / 300 out tokens · cost 0.0042 · 7 Actions · 12.5 s`;
 * with `actionPricePerMillion`, the Actions' price beside them (`7 Actions (0.00035)`).
 */
export function formatSpend(spend: Spend, actionPricePerMillion?: number): string {
  const actions = spend.actions ?? 0;
  const actionPrice = actionPricePerMillion
    ? ` (${formatFigure('cost', actionsCost(actions, actionPricePerMillion))})`
    : '';
  return [
    `${spend.modelCalls} model calls`,
    `${spend.toolCalls} tool calls`,
    `${spend.inputTokens} in / ${spend.outputTokens} out tokens`,
    `cost ${formatFigure('cost', spend.cost)}`,
    `${actions} Actions${actionPrice}`,
    `${formatFigure('wallTimeSeconds', spend.wallTimeSeconds)} s`,
  ].join(' · ');
}

/** Limits written as `cost=0.5,modelCalls=10` (`none` removes one), as the CLI takes them; `source` names them in errors. */
export function parseLimits(text: string, source: string): NonNullable<BudgetChange['turn']> {
  const limits: NonNullable<BudgetChange['turn']> = {};
  for (const pair of text.split(',')) {
    const [figure = '', value = ''] = pair.split('=').map((part) => part.trim());
    if (!(SPEND_FIGURES as readonly string[]).includes(figure)) {
      throw new Error(`${source} ${text}: "${figure}" is no budget figure (${SPEND_FIGURES.join(', ')})`);
    }
    const number = Number(value);
    if (value !== 'none' && (value === '' || !Number.isFinite(number))) {
      throw new Error(`${source} ${text}: ${figure} needs a number (or none), got "${value}"`);
    }
    limits[figure as keyof Spend] = value === 'none' ? null : number;
  }
  return limits;
}

function formatFigure(figure: keyof Spend, value: number): string {
  if (figure === 'cost') return String(Number(value.toPrecision(6)));
  if (figure === 'wallTimeSeconds') return value.toFixed(1);
  return String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
