import { condition, patched } from '@temporalio/workflow';
import { MAX_SEEN_MESSAGE_KEYS, QUEUED_MESSAGE_TEXT_CHARS } from '../src/contract/limits.ts';
import { firstLine } from '../src/contract/truncate.ts';
import type { PromptOptions } from '../src/contract/types/conversation.ts';
import type { TurnResult } from '../src/contract/types/turns.ts';
import { type ConversationState, enqueue } from './state.ts';

/**
 * Where a message goes by its delivery (`MessageDelivery`): `steer` joins the running turn's next
 * model call, `followUp` waits for the next turn, `interrupt` cancels the running tool batch and
 * joins the next model call. Messages taken before this patch (no `delivery`) are steer, as then.
 */
export const DELIVERY_PATCH = 'yiem-delivery';

/**
 * Takes a message sent by `prompt` (`updateId` names it unless `options.key` does) or `post`.
 * Returns the message a `prompt` waits for: this one, or the first one sent with the same key,
 * which is not added again (with the turn that answered it, if one has).
 */
export function takeMessage(
  state: ConversationState,
  text: string,
  options: PromptOptions | undefined,
  updateId?: string,
): { messageId: number; turn?: number } {
  const model = options?.model;
  if (!patched(DELIVERY_PATCH)) return { messageId: enqueue(state, text, undefined, undefined, model) };
  const key = options?.key ?? updateId;
  const seen = key === undefined ? undefined : state.seenMessages.find((each) => each.key === key);
  if (seen) return seen;
  const delivery = options?.delivery ?? 'steer';
  // Sent to an idle conversation, it opens the next turn: its `turnStart` says so.
  const duringTurn = state.running ? state.turn : undefined;
  const messageId = enqueue(state, text, delivery, duringTurn, model);
  if (key !== undefined) {
    state.seenMessages.push({ key, messageId });
    state.seenMessages.splice(0, state.seenMessages.length - MAX_SEEN_MESSAGE_KEYS);
  }
  if (duringTurn !== undefined) {
    state.events.publish(duringTurn, {
      type: 'messageQueued',
      messageId,
      delivery,
      text: firstLine(text, QUEUED_MESSAGE_TEXT_CHARS),
    });
  }
  if (delivery === 'interrupt') interruptToolBatch(state);
  return { messageId };
}

/**
 * What a `prompt` returns: the result of the turn that answers its message. A retried `prompt` of a
 * message whose turn ended already gets that turn's result while it is the latest; after a newer
 * turn it is refused, naming the turn (`Conversation.turnResult` reads it from the event log).
 */
export async function answerTo(
  state: ConversationState,
  taken: { messageId: number; turn?: number },
): Promise<TurnResult> {
  const { messageId, turn } = taken;
  const answering = turn === undefined || (state.running !== undefined && turn === state.turn);
  if (!answering) {
    if (state.lastTurn?.turn === turn) return state.lastTurn;
    throw new Error(`This message was delivered once already; turn ${turn} answered it`);
  }
  state.waiters.set(messageId, (state.waiters.get(messageId) ?? 0) + 1);
  await condition(() => state.resultsByMessage.has(messageId));
  const result = state.resultsByMessage.get(messageId) as TurnResult;
  const left = (state.waiters.get(messageId) ?? 1) - 1;
  if (left > 0) state.waiters.set(messageId, left);
  else {
    state.waiters.delete(messageId);
    state.resultsByMessage.delete(messageId);
  }
  return result;
}

/** Hands `result` to the `prompt`s waiting for any of the messages `ids`. */
export function answerMessages(state: ConversationState, ids: readonly number[], result: TurnResult): void {
  for (const id of ids) if (state.waiters.has(id)) state.resultsByMessage.set(id, result);
}

/**
 * Moves the messages the turn's next model call reads into the transcript (the seed's inputChannel
 * drain) and returns their ids: before the turn's first model call every pending message, after
 * `modelCalls` calls the steer and interrupt ones, while follow-ups wait for the next turn.
 * `interruptedCalls` is how many calls of the batch before were cut short by an interrupt.
 */
export function drainMessages(state: ConversationState, modelCalls: number, interruptedCalls = 0): number[] {
  const { turn, events } = state;
  const drained: number[] = [];
  const waiting = state.pending.splice(0).filter((message) => {
    if (modelCalls > 0 && message.delivery === 'followUp') return true;
    drained.push(message.id);
    // The latest drained message that names a model sets the turn's model (`PromptOptions.model`).
    if (message.model) state.turnModel = message.model;
    const { delivery } = message;
    state.messages.push({
      role: 'user',
      content: message.text,
      timestamp: message.timestamp,
      ...(delivery ? { delivery, turn } : {}),
    });
    if (delivery) {
      const seen = state.seenMessages.find((each) => each.messageId === message.id);
      if (seen) seen.turn = turn;
    }
    if (delivery && message.queuedInTurn !== undefined) {
      events.publish(turn, {
        type: 'messageDelivered',
        messageId: message.id,
        delivery,
        afterModelCall: modelCalls,
        ...(delivery === 'interrupt' && interruptedCalls > 0 ? { interruptedCalls } : {}),
      });
    }
    return false;
  });
  state.pending.push(...waiting);
  return drained;
}

/** Cancels the running tool batch, or the one the model call in flight asks for, when it starts. */
export function interruptToolBatch(state: ConversationState): void {
  const batch = state.toolBatch;
  if (!batch || batch.interrupted) return;
  batch.interrupted = true;
  batch.scope.cancel();
}

/** Whether a message sent with delivery `'interrupt'` waits: the batch about to start does not run. */
export function interruptWaiting(state: ConversationState): boolean {
  return state.pending.some((message) => message.delivery === 'interrupt');
}
