import { createInterface } from 'node:readline/promises';
import type { AgentClient, Conversation } from '../client.ts';
import type { ToolExecutionMode } from '../types.ts';
import { conversationUiUrl } from './config.ts';
import { formatTranscript, formatTurnResult } from './format.ts';

export interface ChatOptions {
  client: AgentClient;
  namespace: string;
  uiUrl: string;
  id?: string;
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

const HELP = 'Commands: /history, /ui, /exit. Anything else is sent to the agent.';

/** A plain REPL over one conversation: resumes `id` when it exists, else starts it. */
export async function runChat(options: ChatOptions): Promise<void> {
  const output = options.output ?? process.stdout;
  const print = (line: string): void => {
    output.write(`${line}\n`);
  };
  const conversation = await openConversation(options);
  print(`Conversation ${conversation.id}`);
  print(`Web UI: ${conversationUiUrl(options.uiUrl, options.namespace, conversation.id)}`);
  print(HELP);
  const lines = createInterface({ input: options.input ?? process.stdin, output, terminal: false });
  output.write('you> ');
  for await (const line of lines) {
    const text = line.trim();
    if (text === '/exit' || text === '/quit') break;
    if (text === '/history') print(formatTranscript(await conversation.messages()));
    else if (text === '/ui') print(conversationUiUrl(options.uiUrl, options.namespace, conversation.id));
    else if (text.startsWith('/')) print(HELP);
    else if (text !== '') print(formatTurnResult(await conversation.send(text)));
    output.write('you> ');
  }
  lines.close();
}

async function openConversation(options: ChatOptions): Promise<Conversation> {
  if (options.id) {
    const existing = options.client.getConversation(options.id);
    const description = await existing.handle.describe().catch(() => undefined);
    if (description?.status.name === 'RUNNING') return existing;
  }
  return options.client.startConversation({
    ...(options.id ? { id: options.id } : {}),
    systemPrompt: options.systemPrompt,
    toolExecution: options.toolExecution,
  });
}
