import { condition, isCancellation, patched, setHandler } from '@temporalio/workflow';
import { budgetProblem, exhaustionMessage } from '../src/contract/budget.ts';
import { pauseUpdate, raiseBudgetUpdate, resumeUpdate } from '../src/contract/definitions.ts';
import { toolErrorMessage } from '../src/contract/messages.ts';
import type { PreparedToolCall } from '../src/contract/protocol.ts';
import type { ConversationStatus, PauseOptions } from '../src/contract/types/conversation.ts';
import type { AssistantMessage } from '../src/contract/types/messages.ts';
import type { BudgetChange, BudgetExhaustion, SpendLimits } from '../src/contract/types/spend.ts';
import type { TurnResult, TurnStop } from '../src/contract/types/turns.ts';
import { metered } from './actionMeter.ts';
import { showCurrentDetails } from './currentDetails.ts';
import { answerMessages, drainMessages } from './delivery.ts';
import type { ConversationState } from './state.ts';
import { BUDGETS_PATCH, type NextStep, PAUSE_PATCH } from './turnControl.ts';

/*
 * Safe points: the places between steps of a turn where it may stand still and later go on as if
 * nothing happened: before each model call and before each tool batch, never inside a batch. The
 * turn stops there when an operator paused the conversation, or when the next step would pass a limit
 * of the budget, and waits for `resume` (or `cancel`). A sub-agent's turn ends at its budget instead
 * of waiting: nobody resumes a sub-agent, and its caller stops at its own next safe point, since a
 * sub-agent's budget is bounded by what its caller had left.
 */

/**
 * The safe point before a model call: waits while the turn must stand still, then takes the
 * messages that came meanwhile into this model call (the turn's `modelCalls`-th; follow-ups after the
 * first wait for the next turn, workflows/delivery.ts). Returns the turn's result when it must end
 * (a sub-agent at its budget); nothing when the call may go ahead, or when the turn was cancelled
 * while it stood still (the model call then ends it as cancelled).
 */
export async function beforeModelCall(
  state: ConversationState,
  answered: number[],
  modelCalls: number,
): Promise<TurnResult | undefined> {
  const ended = await holdAtSafePoint(state, answered, { modelCalls: 1 }, modelCalls);
  return typeof ended === 'string' ? undefined : ended;
}

/** Records a model call's spend. */
export function afterModelCall(state: ConversationState, reply: AssistantMessage): void {
  state.control.modelCalled(reply);
}

/**
 * The safe point before a tool batch. As `beforeModelCall`; a sub-agent that ends here gives every
 * call of the batch a result that says it was not run, so the transcript stays whole.
 */
export async function beforeToolBatch(
  state: ConversationState,
  prepared: PreparedToolCall[],
  answered: number[],
): Promise<TurnResult | undefined> {
  const ended = await holdAtSafePoint(state, answered, { toolCalls: prepared.length });
  if (ended === 'went on') {
    state.control.toolsCalled(prepared.length);
    return undefined;
  }
  if (ended === 'cancelled') return undefined;
  const why = ended.error ?? 'the budget is exhausted';
  state.messages.push(
    ...prepared.map((call) =>
      call.kind === 'immediate'
        ? call.message
        : toolErrorMessage(
            call.toolCallId,
            call.toolName,
            `Tool call "${call.toolName}" was not run: ${why}`,
          ),
    ),
  );
  return ended;
}

/** Before a turn starts: no turn starts while the conversation is paused. */
export async function whilePaused(state: ConversationState): Promise<void> {
  await condition(() => state.control.pause === null);
}

/** A turn ended: its spend stops, `resume` callers get its result; returns the spend for `turnEnd`. */
export function turnEnded(state: ConversationState, result: TurnResult): ConversationStatus['spend'] {
  const { control } = state;
  control.stopClock(state.turn);
  control.turnClosed();
  control.settle({ ...result, spend: control.turnSpend });
  return { conversation: control.spend, turn: control.turnSpend };
}

/** Why a new prompt is refused (a paused conversation that refuses them), or `null`. */
export function promptRefusal(state: ConversationState): string | null {
  return state.control.pause?.prompts === 'refuse'
    ? 'This conversation is paused by an operator and refuses new messages until it is resumed'
    : null;
}

/** The status fields of budgets and pauses. */
export function safePointStatus(
  state: ConversationState,
): Pick<ConversationStatus, 'spend' | 'budget' | 'pause' | 'stop'> {
  const { control } = state;
  return {
    spend: { conversation: control.spend, turn: control.turnSpend },
    budget: control.budget,
    pause: control.pause,
    stop: control.stop?.stop ?? null,
  };
}

/** What a tool call is told of the budget (`ToolCallInfo.remainingBudget`). */
export function toolBudget(state: ConversationState): { remainingBudget?: SpendLimits } {
  return state.control.limited ? { remainingBudget: state.control.remaining() } : {};
}

/** The `pause`, `resume` and `raiseBudget` Updates. */
export function registerSafePointHandlers(state: ConversationState): void {
  const { control } = state;
  setHandler(
    pauseUpdate,
    metered((options: PauseOptions) => {
      patched(PAUSE_PATCH);
      control.pause = { prompts: options?.prompts ?? 'queue', since: Date.now() };
      if (!state.running) state.updateSearchAttributes('idle', state.turn);
      showCurrentDetails(state);
      return state.running !== undefined;
    }),
    {
      validator: (options: PauseOptions) => {
        const prompts = options?.prompts;
        if (prompts !== undefined && prompts !== 'queue' && prompts !== 'refuse') {
          throw new Error(`prompts must be "queue" or "refuse", got ${JSON.stringify(prompts)}`);
        }
      },
    },
  );
  setHandler(
    resumeUpdate,
    metered(async () => {
      control.pause = null;
      control.resumeAsked = true;
      showCurrentDetails(state);
      if (!state.running) {
        state.updateSearchAttributes('idle', state.turn);
        return null;
      }
      const seen = control.outcomes;
      await condition(() => control.outcomes > seen);
      return control.lastOutcome;
    }),
    {
      validator: () => {
        const stopped = control.stop;
        if (control.pause || stopped?.stop.reason !== 'budgetExhausted') return;
        const exhausted = control.reached(stopped.next);
        if (exhausted) {
          throw new Error(`The budget is still exhausted: ${exhaustionMessage(exhausted)}`);
        }
      },
    },
  );
  setHandler(
    raiseBudgetUpdate,
    metered((change: BudgetChange) => control.change(change)),
    {
      validator: (change) => {
        const problem = budgetProblem(change, true);
        if (problem) throw new Error(`Invalid budget change: ${problem}`);
      },
    },
  );
}

/**
 * Stands still while the turn must (paused, or the next step would pass a limit), publishing
 * `turnStopped` and `turnResumed`. At its budget the turn's prompts get a `budgetExhausted` result
 * at once (their senders learn why), and `resume` callers get the same. Before a model call (after
 * `modelCallsSoFar` of them) it drains the messages that came while it stood still.
 */
async function holdAtSafePoint(
  state: ConversationState,
  answered: number[],
  next: NextStep,
  modelCallsSoFar = 0,
): Promise<TurnResult | 'went on' | 'cancelled'> {
  const { control, events, turn } = state;
  control.tick(turn);
  for (;;) {
    const stop = stopNow(state, next);
    if (!stop) return 'went on';
    if (stop.reason === 'budgetExhausted') {
      patched(BUDGETS_PATCH);
      if (state.parentConversation) return exhaustedResult(turn, stop.exhausted);
    }
    control.stopClock(turn);
    control.stop = { stop, next };
    control.resumeAsked = false;
    events.publish(turn, {
      type: 'turnStopped',
      stop,
      spend: { conversation: control.spend, turn: control.turnSpend },
    });
    state.updateSearchAttributes(stop.reason, turn);
    showCurrentDetails(state);
    if (stop.reason === 'budgetExhausted') {
      const result = exhaustedResult(turn, stop.exhausted);
      answerMessages(state, answered.splice(0), result);
      control.settle(result);
    }
    try {
      await condition(() =>
        stop.reason === 'paused' ? control.pause === null : control.resumeAsked || control.pause !== null,
      );
    } catch (error) {
      if (isCancellation(error)) return 'cancelled';
      throw error;
    } finally {
      control.stop = null;
      control.tick(turn);
      showCurrentDetails(state);
    }
    events.publish(turn, { type: 'turnResumed' });
    state.updateSearchAttributes('running', turn);
    if (next.modelCalls) answered.push(...drainMessages(state, modelCallsSoFar));
  }
}

/** Why the turn must stand still now: a pause first, then the budget. */
function stopNow(state: ConversationState, next: NextStep): TurnStop | null {
  const { control } = state;
  const since = Date.now();
  if (control.pause) return { reason: 'paused', since };
  const exhausted = control.reached(next);
  return exhausted ? { reason: 'budgetExhausted', since, exhausted } : null;
}

function exhaustedResult(turn: number, exhausted: BudgetExhaustion): TurnResult {
  return {
    turn,
    status: 'budgetExhausted',
    reply: '',
    error: exhaustionMessage(exhausted),
    budget: exhausted,
  };
}
