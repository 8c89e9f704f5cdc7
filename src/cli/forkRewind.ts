import type { RewindResult } from '../contract/types/conversation.ts';
import { connectedClient } from './commands.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';
import { formatTurnResult } from './format.ts';

export interface ForkFlags extends ConnectionFlags {
  atTurn: string;
  message?: string;
  model?: string;
  system?: string;
  tools?: string[];
  id?: string;
}

/** `yiem fork`: a new conversation from an earlier turn of one; prints its id and that turn's reply. */
export async function forkCommand(sourceId: string, flags: ForkFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const atTurn = turnNumber(flags.atTurn, '--at-turn');
    const fork = await client.getConversation(sourceId).fork({
      atTurn,
      ...(flags.message !== undefined ? { editMessage: flags.message } : {}),
      ...(flags.model !== undefined ? { model: flags.model } : {}),
      ...(flags.system !== undefined ? { systemPrompt: flags.system } : {}),
      ...(flags.tools !== undefined ? { tools: flags.tools } : {}),
      ...(flags.id !== undefined ? { id: flags.id } : {}),
    });
    console.error(`Forked ${sourceId} at turn ${atTurn} into conversation ${fork.id}`);
    const { pendingMessages, state } = await fork.status();
    if (pendingMessages === 0 && state === 'idle') {
      console.error('It has the whole transcript and waits for a message (yiem send --id ...).');
      return;
    }
    const result = await fork.turnResult(atTurn);
    console.log(formatTurnResult(result));
    if (result.status !== 'completed' && result.status !== 'terminated') process.exitCode = 1;
  } finally {
    await client.close();
  }
}

/** `yiem rewind`: resets a conversation to before a turn and prints what that discarded. */
export async function rewindCommand(id: string, flags: ConnectionFlags & { toTurn: string }): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const result = await client.getConversation(id).rewind({ toTurn: turnNumber(flags.toTurn, '--to-turn') });
    console.log(formatRewind(id, result));
  } finally {
    await client.close();
  }
}

export function formatRewind(id: string, result: RewindResult): string {
  const { from, to } = result.discardedTurns;
  const turns = from === to ? `turn ${from}` : `turns ${from} to ${to}`;
  const lines = [
    `Rewound ${id} to before turn ${from} (reset of run ${result.resetRunId} at event ${result.resetEventId}; new run ${result.runId}).`,
    `Discarded: ${turns}, ${result.discardedMessages} transcript message(s), and every message, approval and callback that reached the conversation after that point.`,
    `Kept: ${result.keptMessages} message(s). Not undone: what the discarded tool calls did outside the conversation.`,
  ];
  if (result.requeuedMessages > 0) {
    lines.push(
      `Turn ${from} runs again at once on ${result.requeuedMessages} message(s) that had arrived while turn ${from - 1} still ran.`,
    );
  }
  return lines.join('\n');
}

function turnNumber(text: string, flag: string): number {
  const turn = Number(text);
  if (!Number.isInteger(turn) || turn < 1)
    throw new Error(`${flag} must be a turn number (1 or more), not "${text}"`);
  return turn;
}
