import type { AgentClient } from '../client/client.ts';
import { describeThrown } from '../contract/thrown.ts';
import { toolEndText } from '../contract/toolResult.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';

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
      print(`${prefix} ${message.isError ? '✗' : '✓'} ${message.toolName}: ${toolEndText(message.content)}`);
    }
  } catch (error) {
    if (!signal.aborted) print(`${prefix} (could not follow: ${describeThrown(error)})`);
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

/** How long the chat waits for a sub-agent's last lines before it shows the call's end anyway. */
const LAST_LINES_WAIT_MS = 5_000;

/** Follows each sub-agent the chat's conversation starts, once. */
export class SubAgentFollowers {
  /** By the parent's tool call id: the follower of that call's child. */
  readonly #following = new Map<string, Promise<void>>();
  readonly #client: AgentClient;
  readonly #print: (text: string) => void;
  readonly #signal: AbortSignal;

  constructor(client: AgentClient, print: (text: string) => void, signal: AbortSignal) {
    this.#client = client;
    this.#print = print;
    this.#signal = signal;
  }

  follow(toolCallId: string, subAgent: { agent: string; conversationId: string }): void {
    if (this.#following.has(toolCallId)) return;
    this.#following.set(toolCallId, followSubAgent(this.#client, subAgent, this.#print, this.#signal));
  }

  /**
   * Resolves once the child of the call has printed all it will: the parent's `toolEnd` (and the
   * prompt after the turn) then comes after the sub-agent's lines, not among them.
   */
  async finished(toolCallId: string): Promise<void> {
    const following = this.#following.get(toolCallId);
    if (!following) return;
    this.#following.delete(toolCallId);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, LAST_LINES_WAIT_MS);
    });
    await Promise.race([following, late]);
    clearTimeout(timer);
  }
}
