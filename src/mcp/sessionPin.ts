import type { Client } from '@temporalio/client';
import type { Message } from '../types.ts';

/**
 * The session queue of the conversation's last result from a stateful server (tools named
 * `<prefix>…`), read from its transcript: every result that came from a session names the queue of
 * the worker holding it. `undefined` when there is none, or when the last result did not come from
 * a session (the worker holding it was gone): the next call then opens a new session.
 */
export async function findSessionQueue(
  client: Client,
  conversationId: string,
  toolPrefix: string,
): Promise<string | undefined> {
  const messages = await client.workflow.getHandle(conversationId).query<Message[]>('transcript');
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'toolResult' || !message.toolName.startsWith(toolPrefix)) continue;
    const mcp = message.details.mcp as { sessionQueue?: unknown } | undefined;
    return typeof mcp?.sessionQueue === 'string' ? mcp.sessionQueue : undefined;
  }
  return undefined;
}
