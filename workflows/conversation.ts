import { ApplicationFailure, allHandlersFinished, condition, workflowInfo } from '@temporalio/workflow';
import type { ConversationCarryOver } from '../src/contract/protocol.ts';
import { conversationOptionsProblem } from '../src/contract/settings.ts';
import type { ConversationOptions, ConversationSummary } from '../src/contract/types/conversation.ts';
import { countActions, meterActionsInto } from './actionMeter.ts';
import { showCurrentDetails } from './currentDetails.ts';
import { registerHandlers } from './handlers.ts';
import { whilePaused } from './safePoint.ts';
import { type ConversationState, createConversationState } from './state.ts';
import { runTurn } from './turn.ts';
import { continueAsNewRun, newVersionWaiting } from './versionUpgrade.ts';

/**
 * One conversation (its workflow id is the conversation id). Messages arrive by Update (`prompt`,
 * which waits for its turn's result) or Signal (`post`); each turn drains every pending message.
 * Between turns it may continue as a new run, handing its state over in `carried`.
 */
export async function conversationWorkflow(
  options: ConversationOptions,
  carried?: ConversationCarryOver,
): Promise<ConversationSummary> {
  const invalid = conversationOptionsProblem(options);
  if (invalid) throw ApplicationFailure.nonRetryable(invalid, 'InvalidConversationOptions');
  const state = createConversationState(options, carried);
  meterActionsInto((actions) => state.control.actionsCounted(actions));
  // This run's start (a client's, a continue-as-new's or a parent's): charged to the next turn.
  countActions();
  const { events } = state;
  registerHandlers(state);
  showCurrentDetails(state);
  for (;;) {
    await condition(() => hasWork(state));
    if (state.pending.length === 0 && state.ending) break;
    // Followers' long polls are unfinished handlers too: let them go, or the run never moves on.
    if (newRunWanted(state) && !events.detached && state.pending.length === 0) {
      events.detachFollowers();
      continue;
    }
    if (newRunDue(state)) await continueAsNewRun(state, options);
    await whilePaused(state);
    await runTurn(state);
  }
  state.updateSearchAttributes('ended', state.turn);
  events.detachFollowers();
  await condition(allHandlersFinished);
  return {
    turns: state.turn,
    messageCount: state.messages.length,
    lastTurn: state.lastTurn,
    spend: state.control.spend,
  };
}

/** What wakes the loop: a message, the end, a new run that is due, or followers to let go for one. */
function hasWork(state: ConversationState): boolean {
  return (
    state.pending.length > 0 ||
    state.ending ||
    newRunDue(state) ||
    (newRunWanted(state) && !state.events.detached)
  );
}

/** Whether this run has grown enough to hand over to a new one, or a new version of its code waits. */
function newRunWanted(state: ConversationState): boolean {
  return (
    workflowInfo().continueAsNewSuggested ||
    newVersionWaiting(state) ||
    state.turnsThisRun >= (state.settings.maxTurnsPerRun ?? Number.POSITIVE_INFINITY)
  );
}

/**
 * A waiting `prompt` is an unfinished handler, so its message always gets its turn in this run;
 * only posted messages are handed over.
 */
function newRunDue(state: ConversationState): boolean {
  return newRunWanted(state) && allHandlersFinished();
}
