import type { WorkflowHandle } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { promptUpdate } from '../contract/definitions.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { decodeFromPayloadsAtIndex } from './historyPayloads.ts';
import { eventTimeMs, type HistoryEvent, runHistories } from './runHistories.ts';

/** A message sent with `Conversation.sendDetached`: what to collect its turn by. */
export interface DetachedTurn {
  /** The conversation the message went to. */
  conversationId: string;
  /** The `prompt` Update's id: `Conversation.collect(turnId)` waits for its turn's result. */
  turnId: string;
}

/** One message sent by `prompt` (`send` or `sendDetached`), as the conversation's history records it. */
export interface PromptTurn {
  /** The `prompt` Update's id, to collect its turn by. */
  turnId: string;
  /** The run of the conversation that took it (each continue-as-new run is its own). */
  runId: string;
  /** The message; undefined when the client cannot read it (kept in a payload store, or encrypted otherwise). */
  text: string | undefined;
  /** When the conversation accepted it. */
  sentAt: Date | undefined;
  /** `waiting` until the turn that answers it has ended, then `answered` (or `failed`: the Update itself failed). */
  state: 'waiting' | 'answered' | 'failed';
  /** The turn's result, once answered and readable. */
  result?: TurnResult;
  /** Why the Update failed. */
  error?: string;
}

/**
 * The messages a conversation took by `prompt`, oldest first, newest `limit` of them: read from the
 * history of its runs, newest run first, so it costs a history read per run it goes back.
 */
export async function listPromptTurns(
  handle: WorkflowHandle,
  options: { limit?: number } = {},
): Promise<PromptTurn[]> {
  const limit = options.limit ?? 20;
  const turns: PromptTurn[] = [];
  for await (const runTurns of promptTurnsByRun(handle)) {
    turns.unshift(...runTurns);
    if (turns.length >= limit) break;
  }
  return turns.slice(-limit);
}

/** The prompt turns of each run of the conversation, its latest run first, back along continue-as-new. */
async function* promptTurnsByRun(handle: WorkflowHandle): AsyncGenerator<PromptTurn[]> {
  for await (const { runId, events } of runHistories(handle))
    yield await promptTurnsOf(handle.client.options.loadedDataConverter, events, runId);
}

/** The messages one run's history shows taken by `prompt`, with their turns' results once answered. */
export async function promptTurnsOf(
  converter: LoadedDataConverter,
  events: readonly HistoryEvent[],
  runId: string,
): Promise<PromptTurn[]> {
  const byId = new Map<string, PromptTurn>();
  for (const event of events) {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted?.input?.name === promptUpdate.name && accepted.meta?.updateId) {
      const text = await decodeFromPayloadsAtIndex<unknown>(
        converter,
        0,
        accepted.input.args?.payloads as Payload[] | undefined,
      ).catch(() => undefined);
      byId.set(accepted.meta.updateId, {
        turnId: accepted.meta.updateId,
        runId,
        text: typeof text === 'string' ? text : undefined,
        sentAt: event.eventTime ? new Date(eventTimeMs(event)) : undefined,
        state: 'waiting',
      });
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    const turn = completed?.meta?.updateId ? byId.get(completed.meta.updateId) : undefined;
    if (!completed || !turn) continue;
    if (completed.outcome?.failure) {
      turn.state = 'failed';
      turn.error = completed.outcome.failure.message ?? 'the prompt Update failed';
      continue;
    }
    turn.state = 'answered';
    const result = await decodeFromPayloadsAtIndex<TurnResult>(
      converter,
      0,
      completed.outcome?.success?.payloads as Payload[] | undefined,
    ).catch(() => undefined);
    if (result) turn.result = result;
  }
  return [...byId.values()];
}

/**
 * The result of the turn that answers a detached message, in whichever run of the conversation took
 * it: as its history keeps it once answered (no worker needed), else waited for through `whileWaiting`
 * (which may give up on a worker that is gone). Throws when the conversation has no message with that
 * turn id.
 */
export async function collectTurn(
  handle: WorkflowHandle,
  turnId: string,
  whileWaiting: (turn: Promise<TurnResult>) => Promise<TurnResult> = (turn) => turn,
): Promise<TurnResult> {
  const turn = await findTurn(handle, turnId);
  if (turn.state === 'answered' && turn.result) return turn.result;
  const result = handle.client
    .getHandle(handle.workflowId, turn.runId)
    .getUpdateHandle<TurnResult>(turnId)
    .result()
    .catch((error: unknown) => {
      throw new Error(`Turn ${turnId} of conversation ${handle.workflowId} failed: ${describeThrown(error)}`);
    });
  return whileWaiting(result);
}

/** The turn with that id, looked for from the latest run back, reading no run beyond the one that has it. */
async function findTurn(handle: WorkflowHandle, turnId: string): Promise<PromptTurn> {
  for await (const runTurns of promptTurnsByRun(handle)) {
    const turn = runTurns.find((each) => each.turnId === turnId);
    if (turn) return turn;
  }
  throw new Error(
    `Conversation ${handle.workflowId} has no message with turn id ${turnId} (see yiem turns list ${handle.workflowId})`,
  );
}
