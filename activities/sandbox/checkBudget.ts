import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Time all the written-tool checks (validate, prepare) of one model reply may take together. Each
 * check is also capped on its own; this stops a reply with many slow checks from holding PREPARE.
 */
export const CHECK_BUDGET_MS = 3_000;

const deadlines = new AsyncLocalStorage<number>();

/** Runs `run` (PREPARE of one batch) with one shared time budget for the checks inside it. */
export function withCheckBudget<T>(run: () => T, budgetMs = CHECK_BUDGET_MS): T {
  return deadlines.run(Date.now() + budgetMs, run);
}

/** Milliseconds left of the current batch's budget; unlimited outside a batch. */
export function remainingCheckBudgetMs(): number {
  const deadline = deadlines.getStore();
  return deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, deadline - Date.now());
}
