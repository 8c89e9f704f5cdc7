import type { WorkflowHandle } from '@temporalio/client';
import { statusQuery, turnStartsQuery } from '../contract/definitions.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { TurnStarts } from '../contract/transcript.ts';
import type { ConversationStatus } from '../contract/types/conversation.ts';

/** A conversation's status and where its turns began, read together for a fork or a rewind. */
export interface TurnBoundaries {
  status: ConversationStatus;
  starts: TurnStarts;
}

export async function readTurnBoundaries(handle: WorkflowHandle): Promise<TurnBoundaries> {
  const [status, starts] = await Promise.all([
    handle.query(statusQuery),
    handle.query(turnStartsQuery).catch((error: unknown) => {
      throw new Error(
        `Conversation ${handle.workflowId} cannot tell where its turns began (its workers run a yiem-agent from before fork and rewind, or it has ended long ago): ${describeThrown(error)}`,
      );
    }),
  ]);
  return { status, starts };
}

/**
 * The transcript index at which `turn` began; one past the last turn of an idle conversation is
 * the transcript's end when `allowNext` is set. Throws naming the turns that can be given.
 */
export function turnStartIndex(
  conversationId: string,
  { status, starts }: TurnBoundaries,
  turn: number,
  allowNext: boolean,
): number {
  const last = status.turn;
  const next = allowNext && status.state === 'idle' ? last + 1 : last;
  const earliest = Math.max(1, starts.firstTurn);
  if (!Number.isInteger(turn) || turn < earliest || turn > next) {
    const range = earliest > next ? 'none' : `${earliest} to ${next}`;
    const older =
      earliest > 1
        ? ` (turns before ${earliest} ran on a yiem-agent that did not record where turns begin)`
        : '';
    const running =
      allowNext && status.state !== 'idle' ? `; turn ${last + 1} once the conversation is idle` : '';
    throw new Error(
      `Conversation ${conversationId} has no turn ${turn} to start from: turns ${range} can be given${older}${running}.`,
    );
  }
  if (turn === last + 1) return status.messageCount;
  return starts.starts[turn - starts.firstTurn] as number;
}
