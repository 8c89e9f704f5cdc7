import {
  allHandlersFinished,
  condition,
  continueAsNew,
  makeContinueAsNewFunc,
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
 * workflow continues as new when the server suggests it or its deployment's version changes,
 * carrying only the window.
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
  const newVersion = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  await condition(() => workflowInfo().continueAsNewSuggested || newVersion());
  await condition(allHandlersFinished);
  const carried = {
    tokensPerMinute,
    windowMs,
    reservations: withinWindow(reservations, Date.now(), windowMs),
  };
  // A run never ends by itself: on a versioned worker it moves to the new version, as a
  // conversation does between turns, so that the old one can drain.
  if (newVersion()) {
    return makeContinueAsNewFunc<typeof tokenLimiterWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(
      carried,
    );
  }
  return continueAsNew<typeof tokenLimiterWorkflow>(carried);
}
