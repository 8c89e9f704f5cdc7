import type { Client } from '@temporalio/client';
import type { ConversationWorkflow } from '../../contract/definitions.ts';
import type { ToolArguments } from '../../contract/types/base.ts';
import type { ConversationOptions } from '../../contract/types/conversation.ts';
import type { RecordedToolCall } from '../../contract/types/evals.ts';
import type { Message } from '../../contract/types/messages.ts';
import type { AgentClient } from '../client.ts';
import { startOptions } from '../fork.ts';

/** A tool call as an eval report shows it. */
export interface EvalToolCall {
  /** The tool called. */
  toolName: string;
  /** Its arguments. */
  args: ToolArguments;
  /** Result text. */
  result: string;
  /** Whether the result was an error. */
  isError: boolean;
  /** How a replay answered it without running the tool (absent: the kept call, or a live run). */
  answer?: 'recorded' | 'standIn' | 'diverged';
}

/** One turn of a conversation as an eval compares it. */
export interface EvalTurn {
  /** The user messages the turn answered. */
  user: string[];
  /** The turn's last reply text. */
  reply: string;
  /** Its tool calls, in order. */
  toolCalls: EvalToolCall[];
  /** Input tokens its model calls read. */
  inputTokens: number;
  /** Output tokens they wrote. */
  outputTokens: number;
  /** What they cost, at the worker's prices (0 without). */
  cost: number;
}

/** A kept conversation an eval replays. */
export interface KeptCase {
  caseId: string;
  options: ConversationOptions;
  turns: EvalTurn[];
  /** Every tool call with its result, for recorded mode. */
  recorded: RecordedToolCall[];
}

/**
 * A transcript split into turns: each starts with its user messages (the ones the same turn
 * answered) and holds the replies and tool results up to the next turn's first user message.
 */
export function transcriptTurns(messages: readonly Message[]): EvalTurn[] {
  const turns: EvalTurn[] = [];
  const results = new Map(
    messages.flatMap((message) => (message.role === 'toolResult' ? [[message.toolCallId, message]] : [])),
  );
  let current: EvalTurn | undefined;
  let number: number | undefined;
  for (const message of messages) {
    if (message.role === 'user') {
      // A message joins the turn that answered it; one from before turns were recorded starts a
      // turn unless it came before the model's first reply.
      const answered = current !== undefined && (current.reply !== '' || current.toolCalls.length > 0);
      const next = message.turn === undefined ? answered : message.turn !== number;
      number = message.turn;
      if (!current || next) {
        current = { user: [], reply: '', toolCalls: [], inputTokens: 0, outputTokens: 0, cost: 0 };
        turns.push(current);
      }
      current.user.push(message.content);
      continue;
    }
    if (!current || message.role !== 'assistant') continue;
    if (message.content !== '') current.reply = message.content;
    current.inputTokens += message.usage?.inputTokens ?? 0;
    current.outputTokens += message.usage?.outputTokens ?? 0;
    current.cost += message.usage?.cost ?? 0;
    for (const call of message.toolCalls) {
      const result = results.get(call.id);
      const answer = result?.details.yiemEval;
      current.toolCalls.push({
        toolName: call.name,
        args: call.arguments,
        result: result?.content.map((part) => part.text).join('\n') ?? '',
        isError: result?.isError ?? false,
        ...(answer === 'recorded' || answer === 'standIn' || answer === 'diverged' ? { answer } : {}),
      });
    }
  }
  return turns;
}

/** Every tool call of a transcript with the result it got. */
function recordedCalls(messages: readonly Message[]): RecordedToolCall[] {
  const results = new Map(
    messages.flatMap((message) => (message.role === 'toolResult' ? [[message.toolCallId, message]] : [])),
  );
  return messages.flatMap((message) =>
    message.role !== 'assistant'
      ? []
      : message.toolCalls.flatMap((call) => {
          const result = results.get(call.id);
          if (!result) return [];
          const { content, details, isError } = result;
          return [{ toolName: call.name, args: call.arguments, content, details, isError }];
        }),
  );
}

/** A kept conversation, read whole: its options, its turns and its tool calls. */
export async function readKeptCase(agents: AgentClient, caseId: string): Promise<KeptCase> {
  const conversation = agents.getConversation(caseId);
  const handle = agents.client.workflow.getHandle<ConversationWorkflow>(caseId);
  const [{ messages }, description] = await Promise.all([
    conversation.messagesOrHistory(),
    handle.describe(),
  ]);
  const options = await startOptions(handle, description.runId);
  const turns = transcriptTurns(messages);
  if (turns.length === 0) throw new Error(`Conversation ${caseId} has no turn to replay`);
  return { caseId, options, turns, recorded: recordedCalls(messages) };
}

/** The ids of the conversations a visibility query finds (e.g. `StartTime > "2026-12-01T00:00:00Z"`). */
export async function conversationsOf(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  // A conversation that continued as new is listed once per run.
  for await (const execution of client.workflow.list({
    query: `WorkflowType = 'conversationWorkflow' AND (${query})`,
  }))
    if (!ids.includes(execution.workflowId)) ids.push(execution.workflowId);
  return ids;
}
