import type { AgentClient } from '../client.ts';
import { firstLine, resultText } from '../toolResult.ts';
import type { ConversationEventItem } from '../types.ts';

/**
 * Follows a sub-agent's child conversation while it works, printing its tool calls with its name in
 * front, so the chat shows what the agent it delegated to is doing; its reply is the parent's tool result.
 */
export async function followSubAgent(
  client: AgentClient,
  subAgent: { agent: string; conversationId: string },
  print: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const prefix = `    [${subAgent.agent}]`;
  const child = client.getConversation(subAgent.conversationId);
  const ended = new Set<string>();
  try {
    for await (const event of child.events({ signal })) {
      const line = describe(event);
      if (line) print(`${prefix} ${line}`);
      if (event.type === 'toolEnd') ended.add(event.toolCallId);
      if (event.type === 'turnEnd') return;
    }
    // A child that finished before the first poll has no events to follow; its transcript remains.
    for (const message of await child.messages()) {
      if (message.role !== 'toolResult' || ended.has(message.toolCallId)) continue;
      print(
        `${prefix} ${message.isError ? '✗' : '✓'} ${message.toolName}: ${firstLine(resultText(message.content))}`,
      );
    }
  } catch (error) {
    if (!signal.aborted)
      print(`${prefix} (could not follow: ${error instanceof Error ? error.message : String(error)})`);
  }
}

function describe(event: ConversationEventItem): string | undefined {
  switch (event.type) {
    case 'toolStart':
      return `⚙ ${event.summary}`;
    case 'toolEnd':
      return `${event.isError ? '✗' : '✓'} ${event.toolName}: ${event.text}`;
    case 'approvalRequested':
      return `? ${event.approval.toolName} waits for approval`;
    default:
      return undefined;
  }
}

/** Follows each sub-agent the chat's conversation starts, once. */
export class SubAgentFollowers {
  readonly #followed = new Set<string>();
  readonly #client: AgentClient;
  readonly #print: (text: string) => void;
  readonly #signal: AbortSignal;

  constructor(client: AgentClient, print: (text: string) => void, signal: AbortSignal) {
    this.#client = client;
    this.#print = print;
    this.#signal = signal;
  }

  follow(subAgent: { agent: string; conversationId: string }): void {
    if (this.#followed.has(subAgent.conversationId)) return;
    this.#followed.add(subAgent.conversationId);
    void followSubAgent(this.#client, subAgent, this.#print, this.#signal);
  }
}
