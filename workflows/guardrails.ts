import { isCancellation, patched } from '@temporalio/workflow';
import {
  guardrailsOf,
  guardrailTripMessage,
  rewrittenEntry,
  withheldEntry,
} from '../src/contract/guardrails.ts';
import { cancelledTurn } from '../src/contract/messages.ts';
import type { AgentActivities, GuardrailOutcome } from '../src/contract/protocol.ts';
import type { TranscriptEntry } from '../src/contract/transcript.ts';
import type { GuardrailStage, GuardrailTrip } from '../src/contract/types/guardrails.ts';
import type { AssistantMessage, ToolResultMessage } from '../src/contract/types/messages.ts';
import type { TurnResult } from '../src/contract/types/turns.ts';
import { meteredActivities } from './actionMeter.ts';
import { failureMessage } from './activityFailure.ts';
import type { ConversationState } from './state.ts';

/** Patch of guardrails: their activity, and the turn ends they bring. */
export const GUARDRAILS_PATCH = 'yiem-guardrails';

/*
 * Guardrails run in the `runGuardrails` activity only, none in workflow code: a check in the
 * workflow would be replayed code, so changing it would need a patch every time, and a worker
 * deploys a new guardrail without touching a running conversation. The workflow only knows the
 * names (the conversation's options, or the active agent's) and what the verdicts mean. A stage
 * with no names schedules nothing, so conversations without guardrails run as before.
 */

/** Entries after the guardrails of one stage, and the turn's result when they end it. */
interface Checked<Entry extends TranscriptEntry> {
  entries: Entry[];
  ended?: TurnResult;
}

/**
 * The input guardrails on the user messages they have not seen (`state.inputChecked` on), before
 * the model reads them: a rewrite replaces a message in the transcript (keeping its original), a
 * trip ends the turn.
 */
export async function checkUserMessages(state: ConversationState): Promise<TurnResult | undefined> {
  const { messages } = state;
  const indices: number[] = [];
  for (let index = state.inputChecked; index < messages.length; index++) {
    if (messages[index]?.role === 'user') indices.push(index);
  }
  state.inputChecked = messages.length;
  const checked = await check(
    state,
    'input',
    indices.map((index) => messages[index] as TranscriptEntry),
  );
  checked.entries.forEach((entry, at) => {
    messages[indices[at] as number] = entry;
  });
  return checked.ended;
}

/** The output guardrails on the model's final reply, as the transcript will keep it. */
export function checkReply<Reply extends TranscriptEntry & AssistantMessage>(
  state: ConversationState,
  reply: Reply,
): Promise<Checked<Reply>> {
  return check(state, 'output', [reply]);
}

/** The tool-result guardrails on a batch's results, before the model reads them. */
export function checkToolResults<Result extends TranscriptEntry & ToolResultMessage>(
  state: ConversationState,
  results: Result[],
): Promise<Checked<Result>> {
  return check(state, 'toolResult', results);
}

/** Each entry as the stage's guardrails left it: a rewrite or a mark keeps its role. */
async function check<Entry extends TranscriptEntry>(
  state: ConversationState,
  stage: GuardrailStage,
  entries: Entry[],
): Promise<Checked<Entry>> {
  const names = guardrailsOf(state.settings.guardrails, state.agent, stage);
  if (names.length === 0 || entries.length === 0) return { entries };
  patched(GUARDRAILS_PATCH);
  const { turn } = state;
  let outcomes: GuardrailOutcome[];
  try {
    outcomes = await runGuardrails(state, stage, names, entries);
  } catch (error) {
    // What the guardrails could not check is never read as if they had passed it (a cancelled
    // turn's too): a user message or reply is kept from the model, a tool result withheld.
    const cancelled = isCancellation(error);
    const why = cancelled ? 'the turn was cancelled first' : failureMessage(error);
    return {
      entries: entries.map((entry) => withheldEntry(entry, { failed: why }) as Entry),
      ended: cancelled ? cancelledTurn(turn) : { turn, status: 'failed', reply: '', error: why },
    };
  }
  let trip: GuardrailTrip | undefined;
  const checked = entries.map((entry, at) => {
    const outcome = outcomes[at] ?? { action: 'pass' };
    const toolCallId = entry.role === 'toolResult' ? { toolCallId: entry.toolCallId } : {};
    if (outcome.action === 'pass') return entry;
    if (outcome.action === 'rewrite') {
      for (const guardrail of outcome.rewrittenBy) {
        state.events.publish(turn, { type: 'guardrailRewrote', stage, guardrail, ...toolCallId });
      }
      return rewrittenEntry(entry, outcome.text, outcome.rewrittenBy) as Entry;
    }
    const tripped = { stage, guardrail: outcome.guardrail, reason: outcome.reason, ...toolCallId };
    state.events.publish(turn, { type: 'guardrailTripped', ...tripped });
    trip ??= tripped;
    return withheldEntry(entry, {
      tripped: { guardrail: outcome.guardrail, reason: outcome.reason },
    }) as Entry;
  });
  if (!trip) return { entries: checked };
  return {
    entries: checked,
    ended: {
      turn,
      status: 'guardrailTripped',
      reply: '',
      error: guardrailTripMessage(trip),
      guardrail: trip,
    },
  };
}

/**
 * The activity, named in the Web UI by stage, guardrails and turn; timed and retried as model calls
 * are. The events of its model calls (a `modelFallback`) join the log before its outcomes are read.
 */
async function runGuardrails(
  state: ConversationState,
  stage: GuardrailStage,
  names: string[],
  messages: TranscriptEntry[],
): Promise<GuardrailOutcome[]> {
  const { modelPolicy } = state.settings;
  const output = await meteredActivities<AgentActivities>({
    startToCloseTimeout: modelPolicy.startToCloseTimeout ?? '2 minutes',
    ...(modelPolicy.heartbeatTimeout ? { heartbeatTimeout: modelPolicy.heartbeatTimeout } : {}),
    ...(modelPolicy.retry ? { retry: modelPolicy.retry } : {}),
    summary: `${stage} guardrails ${names.join(', ')} · turn ${state.turn}`,
  }).runGuardrails({
    conversationId: state.conversationId,
    turn: state.turn,
    stage,
    guardrails: names,
    messages,
    followed: state.events.followed,
    eventOffset: state.events.offset,
  });
  // Recorded histories hold the outcomes alone, from before the activity reported events.
  if (Array.isArray(output)) return output;
  if (output.events) state.events.publishFromResult(output.events);
  return output.outcomes;
}
