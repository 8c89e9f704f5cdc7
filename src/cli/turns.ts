import type { Conversation } from '../client/client.ts';
import type { PromptTurn } from '../client/detachedTurns.ts';
import { CLI_RESULT_LINE_CHARS } from '../contract/limits.ts';
import { firstLine } from '../contract/truncate.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { connectedClient } from './commands.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';
import { formatTurnResult } from './format.ts';

/** `yiem turns list`: the messages sent to a conversation by send (detached or not), and their turns. */
export async function turnsListCommand(
  id: string,
  flags: ConnectionFlags & { limit: string },
): Promise<void> {
  if (!/^\d+$/.test(flags.limit) || Number(flags.limit) < 1) {
    throw new Error(`--limit ${flags.limit}: expected a whole number above 0`);
  }
  const client = await connectedClient(connectionConfig(flags));
  try {
    const turns = await client.getConversation(id).turns({ limit: Number(flags.limit) });
    console.log(
      turns.length === 0 ? `No message was sent to ${id} by send.` : turns.map(formatTurn).join('\n'),
    );
  } finally {
    await client.close();
  }
}

/** `yiem turns collect`: waits for a turn's result and prints it; exits 1 when it did not complete. */
export async function turnsCollectCommand(id: string, turnId: string, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    printResult(await client.getConversation(id).collect(turnId));
  } finally {
    await client.close();
  }
}

/** `yiem turns watch`: follows a turn live (text and tools) until it ends, then prints its result. */
export async function turnsWatchCommand(id: string, turnId: string, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  const stop = new AbortController();
  try {
    const conversation = client.getConversation(id);
    const result = conversation.collect(turnId);
    const following = follow(conversation, stop.signal);
    const settled = await result.finally(() => stop.abort());
    await following;
    printResult(settled);
  } finally {
    await client.close();
  }
}

/** What happens in the conversation from now on, as `yiem chat` would show it, until `signal` aborts. */
async function follow(conversation: Conversation, signal: AbortSignal): Promise<void> {
  let midLine = false;
  try {
    const fromOffset = await conversation.eventOffset();
    for await (const item of conversation.events({ fromOffset, signal })) {
      if (item.type === 'textDelta') {
        process.stdout.write(item.text);
        midLine = true;
      } else if (item.type === 'toolStart' || item.type === 'toolEnd') {
        if (midLine) process.stdout.write('\n');
        midLine = false;
        console.log(
          item.type === 'toolStart'
            ? `  ⚙ ${item.summary}`
            : `  ${item.isError ? '✗' : '✓'} ${item.toolName}: ${item.text}`,
        );
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  if (midLine) process.stdout.write('\n');
}

function printResult(result: TurnResult): void {
  console.log(formatTurnResult(result));
  if (result.status !== 'completed' && result.status !== 'terminated') process.exitCode = 1;
}

function formatTurn(turn: PromptTurn): string {
  const outcome =
    turn.state === 'answered' && turn.result
      ? `${turn.result.status}: ${firstLine(turn.result.reply || turn.result.error || '', CLI_RESULT_LINE_CHARS)}`
      : turn.state === 'failed'
        ? `failed: ${turn.error}`
        : 'waiting for its turn';
  const text =
    turn.text === undefined
      ? '(unreadable here)'
      : JSON.stringify(firstLine(turn.text, CLI_RESULT_LINE_CHARS));
  return `${turn.turnId}  ${turn.sentAt?.toISOString() ?? '-'}  ${text}  → ${outcome}`;
}
