import type { AgentClient, Conversation } from '../client/client.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationEventItem, ToolExecutionMode } from '../contract/types.ts';
import { conversationUiUrl } from './config.ts';
import { formatTranscript } from './format.ts';
import { LineReader } from './lineReader.ts';
import { readUserFileHandler } from './readUserFile.ts';
import { SubAgentFollowers } from './subAgentView.ts';
import { TurnView } from './turnView.ts';

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

const HELP = 'Commands: /history, /tools, /ui, /exit. Ctrl-C cancels a running turn; twice exits.';
const PROMPT = 'you> ';

/**
 * The chat: resumes `id` when it runs, else starts it; streams the agent's text and tool progress,
 * asks about tool calls that need approval, and cancels the running turn on Ctrl-C.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const output = options.output ?? process.stdout;
  const input = options.input ?? process.stdin;
  const interactive =
    (input as { isTTY?: boolean }).isTTY === true && (output as { isTTY?: boolean }).isTTY === true;
  const conversation = await openConversation(options);
  const lines = new LineReader(input, output, interactive);
  const view = new TurnView({
    output,
    interactive,
    askApproval: async (approval) => {
      const answer = (await lines.ask(`Approve ${approval.toolName}? [y/n] `))?.trim().toLowerCase();
      const approved = answer === 'y' || answer === 'yes';
      const decide = approved
        ? conversation.approve(approval.approvalId)
        : conversation.deny(approval.approvalId, 'the user said no in the chat');
      await decide.catch((error) => view.notice(`(could not answer: ${describeThrown(error)})`));
      return approved;
    },
  });
  const print = (text: string): void => view.notice(text);
  print(`Conversation ${conversation.id}`);
  print(`Web UI: ${conversationUiUrl(options.uiUrl, options.namespace, conversation.id)}`);
  print(HELP);

  let turnRunning = false;
  /** Turns started by other clients that are running now: Ctrl-C cancels those too. */
  let turnsElsewhere = 0;
  let interrupted = false;
  const following = new AbortController();
  const subAgents = new SubAgentFollowers(options.client, print, following.signal);
  const confirm = async (question: string): Promise<boolean> => {
    const answer = (await view.ask(() => lines.ask(question)))?.trim().toLowerCase();
    return answer === 'y' || answer === 'yes';
  };
  const serving = serveBuiltinCallbacks(conversation, confirm, print, following.signal);
  const offset = await conversation.eventOffset();
  // Read after the offset: whatever changes in between also reaches the follower, which the view dedupes.
  const attached = await conversation.status();
  const follower = follow(conversation, offset, view, following.signal, (event) => {
    if (event.type === 'toolStart' && event.subAgent) subAgents.follow(event.toolCallId, event.subAgent);
    if (event.type === 'toolEnd') return subAgents.finished(event.toolCallId);
    if (event.type !== 'turnStart' || turnRunning) return;
    // Another client started it: its output goes where the idle prompt was, which returns after it.
    lines.hide();
    turnsElsewhere += 1;
    interrupted = false;
    print('A turn started elsewhere; its output follows.');
    void Promise.race([view.turnEnded(event.turn), follower]).then(() => {
      turnsElsewhere -= 1;
      lines.reveal();
    });
  });
  view.askPending(attached.pendingApprovals);
  const onInterrupt = (): void => {
    if ((!turnRunning && turnsElsewhere === 0) || interrupted) {
      print('Bye.');
      following.abort();
      view.stop();
      process.exit(130);
    }
    interrupted = true;
    print('Cancelling the turn… (Ctrl-C again exits)');
    conversation.cancel().catch((error) => print(`(could not cancel: ${describeThrown(error)})`));
  };
  lines.readline.on('SIGINT', onInterrupt);
  process.on('SIGINT', onInterrupt);
  try {
    if (attached.state === 'running') {
      // Its approval questions need the next lines typed, so the prompt waits for the turn to end.
      print('A turn is running; its output follows.');
      turnRunning = true;
      await Promise.race([view.turnEnded(attached.turn), follower]);
      turnRunning = false;
    }
    for (;;) {
      const line = await lines.next(PROMPT);
      if (line === null) break;
      const text = line.trim();
      if (text === '/exit' || text === '/quit') break;
      if (text === '') continue;
      if (text === '/history') print(formatTranscript(await conversation.messages()));
      else if (text === '/tools') print(await describeTools(conversation));
      else if (text === '/ui') print(conversationUiUrl(options.uiUrl, options.namespace, conversation.id));
      else if (text.startsWith('/')) print(HELP);
      else {
        turnRunning = true;
        interrupted = false;
        try {
          const result = await conversation.send(text);
          await Promise.race([view.turnEnded(result.turn), follower.then(() => view.fallback(result))]);
        } catch (error) {
          print(`agent! ${describeThrown(error)}`);
        } finally {
          turnRunning = false;
        }
      }
    }
  } finally {
    process.off('SIGINT', onInterrupt);
    following.abort();
    view.stop();
    lines.close();
    await follower;
    await serving;
  }
}

/** The chat runs the built-in callback tool `readUserFile` here, on the user's machine. */
function serveBuiltinCallbacks(
  conversation: Conversation,
  confirm: (question: string) => Promise<boolean>,
  print: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  return conversation
    .serveCallbacks({ readUserFile: readUserFileHandler(process.cwd(), confirm) }, { signal })
    .catch((error) => {
      if (!signal.aborted) print(`(callback tools stopped: ${describeThrown(error)})`);
    });
}

/** Shows every event from `offset` on until the chat stops; a broken connection is reported, not fatal. */
async function follow(
  conversation: Conversation,
  offset: number,
  view: TurnView,
  signal: AbortSignal,
  beforeShow: (event: ConversationEventItem) => Promise<void> | undefined,
): Promise<void> {
  try {
    for await (const event of conversation.events({ fromOffset: offset, signal })) {
      await beforeShow(event);
      view.show(event);
    }
  } catch (error) {
    if (!signal.aborted) {
      view.notice(`(live updates stopped: ${describeThrown(error)})`);
    }
  }
}

async function describeTools(conversation: Conversation): Promise<string> {
  const tools = await conversation.tools();
  if (tools.length === 0) return 'No tools.';
  return tools.map((tool) => `  ${tool.name} (${tool.label}): ${tool.description}`).join('\n');
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
