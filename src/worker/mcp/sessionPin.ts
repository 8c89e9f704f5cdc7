import type { Client } from '@temporalio/client';
import { transcriptQuery } from '../../contract/definitions.ts';
import type { TranscriptEntry } from '../../contract/transcript.ts';
import type { Message } from '../../contract/types/messages.ts';
import { ContentStore } from '../../infrastructure/storage/contentStore.ts';

/** Entries read per transcript page while looking back for the latest session result. */
const ENTRIES_PER_PAGE = 50;

/**
 * The session queue named by the conversation's latest result of this server's tools, if any. It
 * reads the transcript backwards, a page at a time, so a long conversation costs a query or two, and
 * fetches a stored result from the payload store only when it is the one that decides.
 */
export async function findSessionQueue(
  client: Client,
  conversationId: string,
  toolPrefix: string,
): Promise<string | undefined> {
  const handle = client.workflow.getHandle(conversationId);
  let end = (await handle.query(transcriptQuery)).total;
  while (end > 0) {
    const from = Math.max(0, end - ENTRIES_PER_PAGE);
    const entries = (await handle.query(transcriptQuery, from)).messages.slice(0, end - from);
    for (let index = entries.length - 1; index >= 0; index--) {
      const entry = entries[index];
      if (entry?.role !== 'toolResult' || !entry.toolName.startsWith(toolPrefix)) continue;
      const message = await resolved(client, entry);
      const mcp =
        message.role === 'toolResult' ? (message.details.mcp as { sessionQueue?: unknown }) : undefined;
      return typeof mcp?.sessionQueue === 'string' ? mcp.sessionQueue : undefined;
    }
    end = from;
  }
  return undefined;
}

async function resolved(client: Client, entry: TranscriptEntry): Promise<Message> {
  const { stored, ...message } = entry;
  const store = stored ? ContentStore.of(client.options.loadedDataConverter) : undefined;
  return stored && store ? store.get<Message>(stored) : (message as Message);
}
