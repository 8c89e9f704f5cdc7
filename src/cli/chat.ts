import { randomUUID } from 'node:crypto';
import type { AgentClient, Conversation } from '../client/client.ts';
import type { ReconnectOptions } from '../client/conversationEvents.ts';
import { NoWorkerError } from '../client/errors.ts';
import { isUnreachable, reachable, untilReachable } from '../client/reachability.ts';
import { formatSpend, parseLimits } from '../contract/budget.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ConversationStatus, ToolExecutionMode } from '../contract/types/conversation.ts';
import type { ConversationEventItem } from '../contract/types/events.ts';
import type { MessageDelivery, ToolResultMessage } from '../contract/types/messages.ts';
import type { TurnResult } from '../contract/types/turns.ts';
import { actionPricePerMillion, cliDecider, conversationUiUrl } from './config.ts';
import { formatCompaction, formatTranscript } from './format.ts';
import { LineReader } from './lineReader.ts';
import { readUserFileHandler } from './readUserFile.ts';
import { SubAgentFollowers } from './subAgentView.ts';
import { TurnView } from './turnView.ts';

export interface ChatOptions {
  client: AgentClient;
  /** The Temporal frontend the client talks to, as the chat names it when it cannot be reached. */
  address: string;
  namespace: string;
  uiUrl: string;
  id?: string;
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

const HELP =
  'Commands: /history, /compact, /tools, /ui, /spend, /budget turn|conversation cost=…,modelCalls=…, /resume, /exit. Ctrl-C cancels a running turn; twice exits. While the agent works: a line joins its next model call, /followup <text> waits for the next turn, /interrupt <text> stops its tools and is read at once.';
const PROMPT = 'you> ';
/** Messages of a resumed conversation shown when the chat attaches; `/history` shows them all. */
const RESUMED_MESSAGES = 20;
/**
 * How long after its result the chat waits for a turn's events before it prints the reply from the
 * result: longer than a sub-agent's last lines may take (subAgentView.ts), so normally never.
 */
const TURN_EVENTS_GRACE_MS = 10_000;

/** `/compact`: summarises the older turns now; a refusal (compaction: false) is shown, not thrown. */
async function compactNow(conversation: Conversation): Promise<string> {
  try {
    return formatCompaction(await conversation.compact());
  } catch (error) {
    return `Cannot compact: ${describeThrown(error)}`;
  }
}

/** What the chat's parts share while it runs. */
interface ChatSession {
  conversation: Conversation;
  options: ChatOptions;
  view: TurnView;
  lines: LineReader;
  print: (text: string) => void;
  outage: Outage;
  /** Ends once the chat stops following the conversation's events. */
  follower: Promise<void>;
  following: AbortController;
  interactive: boolean;
  turnRunning: boolean;
  /** Turns started by other clients that are running now: Ctrl-C cancels those too. */
  turnsElsewhere: number;
  interrupted: boolean;
  /** The message being sent; while it is held through an outage, Ctrl-C drops it. */
  sending: HeldMessage | undefined;
}

/**
 * The chat: resumes `id` when it runs, else starts it; streams the agent's text and tool progress,
 * asks about tool calls that need approval, and cancels the running turn on Ctrl-C.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const output = options.output ?? process.stdout;
  const input = options.input ?? process.stdin;
  const interactive =
    (input as { isTTY?: boolean }).isTTY === true && (output as { isTTY?: boolean }).isTTY === true;
  const { conversation, resumed } = await openConversation(options);
  const lines = new LineReader(input, output, interactive);
  const view = chatView(conversation, lines, output, interactive);
  const print = (text: string): void => view.notice(text);
  print(`Conversation ${conversation.id}`);
  print(`Web UI: ${conversationUiUrl(options.uiUrl, options.namespace, conversation.id)}`);
  if (resumed) print(await earlierTurns(conversation));
  print(HELP);
  const chat: ChatSession = {
    conversation,
    options,
    view,
    lines,
    print,
    outage: new Outage(options.address, print),
    follower: Promise.resolve(),
    following: new AbortController(),
    interactive,
    turnRunning: false,
    turnsElsewhere: 0,
    interrupted: false,
    sending: undefined,
  };
  const confirm = async (question: string): Promise<boolean> => {
    const answer = (await view.ask(() => lines.ask(question)))?.trim().toLowerCase();
    return answer === 'y' || answer === 'yes';
  };
  const attached = await conversation.statusAndOffset();
  // After the chat's own reads: queries sent at once to a just-started conversation queue up in the server.
  const serving = serveBuiltinCallbacks(conversation, confirm, print, chat.following.signal, chat.outage);
  chat.follower = followInChat(chat, attached.eventOffset);
  view.askPending(attached.pendingApprovals);
  const onInterrupt = (): void => interruptChat(chat);
  lines.readline.on('SIGINT', onInterrupt);
  process.on('SIGINT', onInterrupt);
  try {
    if (attached.state === 'running') {
      // Its approval questions need the next lines typed, so the prompt waits for the turn to end.
      print('A turn is running; its output follows.');
      chat.turnRunning = true;
      await Promise.race([view.turnEnded(attached.turn), chat.follower]);
      chat.turnRunning = false;
    }
    for (;;) {
      const line = await lines.next(PROMPT);
      if (line === null) break;
      const text = line.trim();
      if (text === '/exit' || text === '/quit') break;
      if (text !== '') await handleLine(chat, text);
    }
  } finally {
    process.off('SIGINT', onInterrupt);
    chat.following.abort();
    view.stop();
    lines.close();
    await chat.follower;
    await serving;
  }
}

/** The chat's view of the turns, asking about approvals on its lines. */
function chatView(
  conversation: Conversation,
  lines: LineReader,
  output: NodeJS.WritableStream,
  interactive: boolean,
): TurnView {
  const decider = cliDecider('yiem chat');
  return new TurnView({
    output,
    interactive,
    askApproval: async (approval, withdrawn) => {
      const answer = await lines.ask(`Approve ${approval.toolName}? [y/n] `, withdrawn);
      if (answer === null) return null;
      const said = answer.trim().toLowerCase();
      return said === 'y' || said === 'yes';
    },
    decide: async (approval, approved) => {
      await (approved
        ? conversation.approve(approval.approvalId, { decider })
        : conversation.deny(approval.approvalId, 'the user said no in the chat', { decider }));
    },
    readResults: (calls) => recentResults(conversation, calls),
    redrawPrompt: () => lines.redraw(),
  });
}

/** Follows the conversation's events from `offset`; a turn another client starts shows where the prompt was. */
function followInChat(chat: ChatSession, offset: number): Promise<void> {
  const subAgents = new SubAgentFollowers(chat.options.client, chat.print, chat.following.signal);
  return follow(chat.conversation, offset, chat.view, chat.following.signal, chat.outage, (event) => {
    if (event.type === 'toolStart' && event.subAgent) subAgents.follow(event.toolCallId, event.subAgent);
    if (event.type === 'toolEnd') return subAgents.finished(event.toolCallId);
    if (event.type !== 'turnStart' || chat.turnRunning) return;
    // Another client started it: its output goes where the idle prompt was, which returns after it.
    chat.lines.hide();
    chat.turnsElsewhere += 1;
    chat.interrupted = false;
    chat.print('A turn started elsewhere; its output follows.');
    void Promise.race([chat.view.turnEnded(event.turn), chat.follower]).then(() => {
      chat.turnsElsewhere -= 1;
      chat.lines.reveal();
    });
  });
}

/** Ctrl-C: drops a held message, else cancels the running turn, else (or the second time) exits. */
function interruptChat(chat: ChatSession): void {
  if (chat.sending?.held) {
    chat.sending.drop.abort();
    return;
  }
  if ((!chat.turnRunning && chat.turnsElsewhere === 0) || chat.interrupted) {
    chat.print('Bye.');
    chat.following.abort();
    chat.view.stop();
    process.exit(130);
  }
  chat.interrupted = true;
  chat.print('Cancelling the turn… (Ctrl-C again exits)');
  chat.conversation.cancel().catch((error) => chat.print(`(could not cancel: ${describeThrown(error)})`));
}

/** One line typed at the prompt: a command, or a message for the agent. */
async function handleLine(chat: ChatSession, text: string): Promise<void> {
  const { conversation, options, print } = chat;
  if (text === '/history') print(formatTranscript(await conversation.messages()));
  else if (text === '/compact') print(await compactNow(conversation));
  else if (text === '/tools') print(await describeTools(conversation));
  else if (text === '/ui') print(conversationUiUrl(options.uiUrl, options.namespace, conversation.id));
  else if (text === '/spend') print(describeSpend(await conversation.status()));
  else if (text.startsWith('/budget '))
    print(await changeBudget(conversation, text.slice('/budget '.length)));
  else if (text === '/resume') await resumeTurn(chat);
  else if (text.startsWith('/')) print(HELP);
  else await sendMessage(chat, text);
}

/** `/resume`: goes on with a paused or stopped turn and shows it. */
async function resumeTurn(chat: ChatSession): Promise<void> {
  chat.turnRunning = true;
  try {
    const result = await chat.conversation.resume();
    if (result) await showReply(chat.view, result, chat.follower);
    else chat.print('Nothing was paused or stopped.');
  } catch (error) {
    chat.print(`agent! ${describeThrown(error)}`);
  } finally {
    chat.turnRunning = false;
  }
}

/** Sends a message (held through outages) and shows its turn, and the turns of lines typed meanwhile. */
async function sendMessage(chat: ChatSession, text: string): Promise<void> {
  const { conversation, lines, print } = chat;
  chat.turnRunning = true;
  chat.interrupted = false;
  /** Messages typed meanwhile: the prompt returns once their turns (a follow-up's is the next) are shown. */
  const sentMeanwhile: Promise<TurnResult | undefined>[] = [];
  // Piped lines keep waiting for the turn to end, as a script expects.
  if (chat.interactive) lines.unasked = (typed) => sendDuringTurn(conversation, typed, sentMeanwhile, print);
  try {
    chat.sending = { held: false, drop: new AbortController() };
    const result = await sendThroughOutages(conversation, text, chat.outage, chat.sending);
    if (result) await showReply(chat.view, result, chat.follower);
    else print('Your message was dropped; it was never sent.');
    for (let next = sentMeanwhile.shift(); next; next = sentMeanwhile.shift()) {
      const answered = await next;
      if (answered) await showReply(chat.view, answered, chat.follower);
    }
  } catch (error) {
    print(`agent! ${describeThrown(error)}`);
  } finally {
    lines.unasked = undefined;
    chat.sending = undefined;
    chat.turnRunning = false;
  }
}

/** The commands that send a message to a running turn, by delivery. */
const DURING_TURN_COMMANDS: Record<string, MessageDelivery | undefined> = {
  '/followup': 'followUp',
  '/interrupt': 'interrupt',
};

/**
 * A line typed while the agent works: a plain one joins the running turn's next model call (steer),
 * `/followup <text>` waits for the next turn, `/interrupt <text>` cancels the running tools and is
 * read at once. The event log then shows where it entered (turnView.ts). Returns false for other
 * commands, which wait for the prompt.
 */
function sendDuringTurn(
  conversation: Conversation,
  typed: string,
  sent: Promise<TurnResult | undefined>[],
  print: (text: string) => void,
): boolean {
  const text = typed.trim();
  if (text === '') return true;
  const command = text.split(/\s/, 1)[0] ?? '';
  const delivery = text.startsWith('/') ? DURING_TURN_COMMANDS[command] : 'steer';
  if (!delivery) return false;
  const message = delivery === 'steer' ? text : text.slice(command.length).trim();
  if (message === '') {
    print(`Usage: ${command} <text>`);
    return true;
  }
  const answer = conversation.send(message, { delivery, updateId: randomUUID() }).catch((error: unknown) => {
    print(`agent! ${describeThrown(error)}`);
    return undefined;
  });
  sent.push(answer);
  return true;
}

/** `/spend`: what the conversation and the turn spent, and the limits. */
function describeSpend(status: ConversationStatus): string {
  // Workers from before budgets report none.
  if (!status.spend) return 'This conversation reports no spend (its workers predate budgets).';
  return (['conversation', 'turn'] as const)
    .map((scope) => {
      const limits = Object.entries(status.budget[scope] ?? {}).map(
        ([figure, value]) => `${figure}=${value}`,
      );
      return `${scope}: ${formatSpend(status.spend[scope], actionPricePerMillion())} (budget: ${limits.join(', ') || 'none'})`;
    })
    .join('\n');
}

/** `/budget turn cost=1,modelCalls=none`: changes the limits of one scope. */
async function changeBudget(conversation: Conversation, text: string): Promise<string> {
  const [scope = '', limits = ''] = text.trim().split(/\s+/, 2);
  if (scope !== 'turn' && scope !== 'conversation')
    return 'Usage: /budget turn|conversation cost=…,modelCalls=…';
  try {
    const budget = await conversation.raiseBudget({ [scope]: parseLimits(limits, '/budget') });
    const shown = Object.entries(budget[scope] ?? {}).map(([figure, value]) => `${figure}=${value}`);
    return `The ${scope} budget is now ${shown.join(', ') || 'unlimited'}; /resume goes on.`;
  } catch (error) {
    return `agent! ${describeThrown(error)}`;
  }
}

/**
 * Whether Temporal answers, as the chat tells the person: once when it stops answering (whichever
 * of the follower, the callback server or a send notices first), once when it answers again.
 */
class Outage implements ReconnectOptions {
  readonly #address: string;
  readonly #print: (text: string) => void;
  #down = false;

  constructor(address: string, print: (text: string) => void) {
    this.#address = address;
    this.#print = print;
  }

  get down(): boolean {
    return this.#down;
  }

  onUnreachable = (): void => {
    if (this.#down) return;
    this.#down = true;
    this.#print(`Temporal at ${this.#address} is unreachable; retrying…`);
  };

  /** Said when the outage comes after Temporal accepted the message: only its reply waits. */
  replyAwaited(): void {
    this.#down = true;
    this.#print(
      `Temporal at ${this.#address} is unreachable; retrying (your message was accepted: its reply shows once Temporal answers)`,
    );
  }

  /** Said when a typed message meets the outage: it is kept, and sent once Temporal answers. */
  messageHeld(): void {
    this.#down = true;
    this.#print(
      `Temporal at ${this.#address} is unreachable; retrying (your message was not sent yet: it goes out once Temporal answers; Ctrl-C drops it)`,
    );
  }

  onReconnected = (): void => {
    if (!this.#down) return;
    this.#down = false;
    this.#print(`Temporal at ${this.#address} answers again.`);
  };
}

/** A message on its way: `held` while it waits for Temporal to answer; aborting `drop` then drops it. */
interface HeldMessage {
  held: boolean;
  drop: AbortController;
}

/**
 * Sends `text`, holding it through an outage: when Temporal does not answer, the person is told,
 * and the message goes out once it does. The same update id on every try delivers it at most once,
 * even when a try reached Temporal just before the connection broke. Resolves `undefined` when the
 * message is dropped while it waits.
 */
async function sendThroughOutages(
  conversation: Conversation,
  text: string,
  outage: Outage,
  message: HeldMessage,
): Promise<TurnResult | undefined> {
  const updateId = randomUUID();
  // Once accepted, the message is in the conversation: an outage delays its reply, nothing more.
  let accepted = false;
  let reconnectedAt: number | undefined;
  for (;;) {
    try {
      // A send to a server that is down would retry for about 20 s before it failed: ask first.
      if (!outage.down && (await reachable(conversation.handle))) {
        const update = await conversation.submit(text, { updateId });
        accepted = true;
        return await update.result();
      }
    } catch (error) {
      if (workersReconnecting(error, reconnectedAt)) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        continue;
      }
      if (!isUnreachable(error)) throw error;
    }
    if (accepted) outage.replyAwaited();
    else outage.messageHeld();
    message.held = !accepted;
    const back = await untilReachable(conversation.handle, message.drop.signal);
    message.held = false;
    if (!back) return undefined;
    outage.onReconnected();
    reconnectedAt = Date.now();
  }
}

/** How long a message held through an outage waits for the queue's workers to poll again. */
const WORKERS_BACK_MS = 30_000;

/**
 * Whether no worker polls yet because Temporal came back a moment ago: its workers reconnect with a
 * backoff of their own, so a held message waits for them before the chat says none polls.
 */
function workersReconnecting(error: unknown, reconnectedAt: number | undefined): boolean {
  return (
    error instanceof NoWorkerError &&
    reconnectedAt !== undefined &&
    Date.now() - reconnectedAt < WORKERS_BACK_MS
  );
}

/**
 * Waits until the follower has drawn the turn's end; prints the reply from the result when the
 * follower ended or is still catching up after an outage, so a reply is always printed.
 */
async function showReply(view: TurnView, result: TurnResult, follower: Promise<void>): Promise<void> {
  // A turn stopped at its budget has not ended: its `turnStopped` event said why.
  if (result.status === 'budgetExhausted') return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, TURN_EVENTS_GRACE_MS);
  });
  await Promise.race([view.turnEnded(result.turn), follower, grace]);
  clearTimeout(timer);
  view.fallback(result);
}

/** The chat runs the built-in callback tool `readUserFile` here, on the user's machine. */
function serveBuiltinCallbacks(
  conversation: Conversation,
  confirm: (question: string) => Promise<boolean>,
  print: (text: string) => void,
  signal: AbortSignal,
  reconnect: ReconnectOptions,
): Promise<void> {
  return conversation
    .serveCallbacks({ readUserFile: readUserFileHandler(process.cwd(), confirm) }, { signal, reconnect })
    .catch((error) => {
      if (!signal.aborted) print(`(callback tools stopped: ${describeThrown(error)})`);
    });
}

/** Shows every event from `offset` on until the chat stops, following on through outages. */
async function follow(
  conversation: Conversation,
  offset: number,
  view: TurnView,
  signal: AbortSignal,
  reconnect: ReconnectOptions,
  beforeShow: (event: ConversationEventItem) => Promise<void> | undefined,
): Promise<void> {
  try {
    for await (const event of conversation.events({ fromOffset: offset, signal, reconnect })) {
      await beforeShow(event);
      await view.settle(event);
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

/** The latest messages of a resumed conversation, so the person sees where it stands. */
async function earlierTurns(conversation: Conversation): Promise<string> {
  const { messageCount } = await conversation.status();
  if (messageCount === 0) return 'No messages yet.';
  const from = Math.max(0, messageCount - RESUMED_MESSAGES);
  const shown = formatTranscript(await conversation.messages({ fromIndex: from }));
  return from === 0 ? shown : `(${from} earlier messages: /history shows them)\n${shown}`;
}

/** Messages past the batch's own results that the transcript may already hold when they are read. */
const RESULTS_SLACK = 4;

/** The results of `calls` at the end of the transcript (the latest result of a repeated id). */
async function recentResults(
  conversation: Conversation,
  calls: readonly { id: string }[],
): Promise<ToolResultMessage[]> {
  const { messageCount } = await conversation.status();
  const recent = await conversation.messages({
    fromIndex: Math.max(0, messageCount - calls.length - RESULTS_SLACK),
  });
  const results = recent.filter((message): message is ToolResultMessage => message.role === 'toolResult');
  return calls.flatMap((call) => results.findLast((result) => result.toolCallId === call.id) ?? []);
}

/**
 * Resumes the conversation `id` names while it runs, else starts one (with that id, if given).
 * `resumed` says whether it already existed.
 */
export async function openConversation(options: {
  client: AgentClient;
  id?: string;
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
}): Promise<{ conversation: Conversation; resumed: boolean }> {
  if (options.id) {
    const existing = options.client.getConversation(options.id);
    const description = await existing.handle.describe().catch(() => undefined);
    if (description?.status.name === 'RUNNING') {
      // Every read and message of the chat would wait on a worker that is not there.
      const read = await existing.statusOrRecord();
      if ('record' in read) {
        throw new Error(
          `Conversation ${options.id} cannot chat now: ${read.record.noWorker}. Start a worker on it ("yiem worker --task-queue ${read.record.taskQueue}"); "yiem history ${options.id}" reads it meanwhile.`,
        );
      }
      return { conversation: existing, resumed: true };
    }
  }
  const conversation = await options.client.startConversation({
    ...(options.id ? { id: options.id } : {}),
    systemPrompt: options.systemPrompt,
    toolExecution: options.toolExecution,
  });
  return { conversation, resumed: false };
}
