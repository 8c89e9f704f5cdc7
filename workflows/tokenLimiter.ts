import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  reserveTokensUpdate,
  settleTokensSignal,
  type TokenLimiterState,
  tokenWait,
  withinWindow,
} from '../src/contract/tokenLimiter.ts';

/**
 * One model's tokens per minute for every worker and conversation (`rateLimit.tokensPerMinute`): a
 * sliding window of reserved tokens. The window is workflow state, so it outlives any worker; the
 * workflow continues as new when the server suggests it, carrying only the window.
 */
export async function tokenLimiterWorkflow(state: TokenLimiterState): Promise<never> {
  const { tokensPerMinute, windowMs } = state;
  let reservations = state.reservations;
  setHandler(reserveTokensUpdate, ({ id, tokens }) => {
    const now = Date.now();
    reservations = withinWindow(reservations, now, windowMs);
    const wait = tokenWait(reservations, tokens, now, tokensPerMinute, windowMs);
    if (wait === 0) reservations.push({ id, at: now, tokens });
    return wait;
  });
  setHandler(settleTokensSignal, ({ id, tokens }) => {
    const reservation = reservations.find((each) => each.id === id);
    if (reservation) reservation.tokens = tokens;
  });
  await condition(() => workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  return continueAsNew<typeof tokenLimiterWorkflow>({
    tokensPerMinute,
    windowMs,
    reservations: withinWindow(reservations, Date.now(), windowMs),
  });
}
