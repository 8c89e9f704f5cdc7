import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { ConversationWorkflow } from '../../contract/definitions.ts';
import { describeThrown } from '../../contract/thrown.ts';
import type { ToolArguments } from '../../contract/types/base.ts';
import type { ConversationOptions } from '../../contract/types/conversation.ts';
import type { RecordedToolCall } from '../../contract/types/evals.ts';
import type { Message } from '../../contract/types/messages.ts';
import type { TurnResult } from '../../contract/types/turns.ts';
import { ContentStore } from '../../infrastructure/storage/contentStore.ts';
import type { AgentClient } from '../client.ts';
import { promptTurnsOf } from '../detachedTurns.ts';
import { decodeFromPayloadsAtIndex } from '../historyPayloads.ts';
import { type HistoryEvent, type RunHistory, runHistories } from '../runHistories.ts';
import { historyEntries } from '../serverRecord.ts';
import { resolveEntry } from '../transcriptReader.ts';

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
  /** The turn's user messages. */
  user: string[];
  /** The turn's last reply text. */
  reply: string;
  /** The tool calls of the turn's replies, in order, with their results. */
  toolCalls: EvalToolCall[];
  /** Input tokens of the turn's model calls. */
  inputTokens: number;
  /** Output tokens of the turn's model calls. */
  outputTokens: number;
  /** What the turn's model calls cost (the workers' price table; 0 without one). */
  cost: number;
  /**
   * Temporal Cloud Actions the turn used (its result's `spend.actions`); 0 when its result is not
   * readable: a turn only posted messages started, or one of a run from before the meter.
   */
  actions: number;
  /**
   * Milliseconds the turn worked (its result's `spend.wallTimeSeconds`, without time stopped at a
   * safe point); 0 when its result is not readable.
   */
  workMs: number;
  /** The conversation's number of the turn, when its messages carry it. */
  turn?: number;
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
        current = {
          user: [],
          reply: '',
          toolCalls: [],
          inputTokens: 0,
          outputTokens: 0,
          cost: 0,
          actions: 0,
          workMs: 0,
        };
        if (number !== undefined) current.turn = number;
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

/** Sets each turn's Actions and work time from the turns' results, matched by turn number. */
export function withActions(turns: EvalTurn[], results: readonly (TurnResult | null | undefined)[]): void {
  const byTurn = new Map(results.flatMap((result) => (result ? [[result.turn, result.spend]] : [])));
  // Without numbers on the messages (a transcript read from history), turns count from 1.
  turns.forEach((turn, index) => {
    const spend = byTurn.get(turn.turn ?? index + 1);
    turn.actions = spend?.actions ?? 0;
    turn.workMs = Math.round((spend?.wallTimeSeconds ?? 0) * 1000);
  });
}

/** A kept conversation from its options, transcript and turn results. */
function keptCaseOf(
  caseId: string,
  options: ConversationOptions,
  messages: readonly Message[],
  results: readonly TurnResult[],
): KeptCase {
  const turns = transcriptTurns(messages);
  if (turns.length === 0) throw new Error(`Conversation ${caseId} has no turn to replay`);
  withActions(turns, results);
  return { caseId, options, turns, recorded: recordedCalls(messages) };
}

/** The options a run's history began with. */
async function optionsOf(
  converter: LoadedDataConverter,
  events: readonly HistoryEvent[],
  where: string,
): Promise<ConversationOptions> {
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`The history of ${where} does not begin with its start`);
  return decodeFromPayloadsAtIndex<ConversationOptions>(converter, 0, started.input?.payloads as Payload[]);
}

/** The results of the turns `prompt` asked for in these runs' histories. */
async function turnResults(
  converter: LoadedDataConverter,
  runs: readonly RunHistory[],
): Promise<TurnResult[]> {
  const turns = await Promise.all(runs.map(({ events, runId }) => promptTurnsOf(converter, events, runId)));
  return turns.flat().flatMap((turn) => (turn.result ? [turn.result] : []));
}

/** A kept conversation, read whole: its options, its turns with their Actions, and its tool calls. */
export async function readKeptCase(agents: AgentClient, caseId: string): Promise<KeptCase> {
  const handle = agents.client.workflow.getHandle<ConversationWorkflow>(caseId);
  const converter = agents.client.options.loadedDataConverter;
  const runs: RunHistory[] = [];
  for await (const run of runHistories(handle)) runs.push(run);
  const [{ messages }, options, results] = await Promise.all([
    agents.getConversation(caseId).messagesOrHistory(),
    optionsOf(converter, runs[0]?.events ?? [], `conversation ${caseId}`),
    turnResults(converter, runs),
  ]);
  return keptCaseOf(caseId, options, messages, results);
}

/** The `*.json` files of each path: a folder's, or the file itself. */
async function historyFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const each of paths) {
    const info = await stat(each).catch((error: unknown) => {
      throw new Error(`Cannot read the exported histories ${each}: ${describeThrown(error)}`);
    });
    if (!info.isDirectory()) files.push(each);
    else
      files.push(
        ...(await readdir(each))
          .filter((file) => file.endsWith('.json'))
          .sort()
          .map((file) => path.join(each, file)),
      );
  }
  if (files.length === 0) throw new Error(`No history files (*.json) in ${paths.join(', ')}`);
  return files;
}

/** One exported run: its conversation (from the file's name when the start event lacks it) and events. */
async function exportedRun(file: string): Promise<RunHistory & { conversationId: string }> {
  let events: HistoryEvent[];
  try {
    events = historyFromJSON(JSON.parse(await readFile(file, 'utf8'))).events ?? [];
  } catch (error) {
    throw new Error(`${file} is no exported history: ${describeThrown(error)}`);
  }
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`${file} is no workflow history: its first event is not its start`);
  const [namedId, namedRun] = path.basename(file, '.json').split('__');
  return {
    conversationId: started.workflowId || decodeURIComponent(namedId ?? ''),
    runId: namedRun || started.originalExecutionRunId || '',
    events,
  };
}

/**
 * The kept conversations of exported history files (`yiem export-histories`; folders or files): one
 * case per conversation, its transcript from its latest run (which carries the earlier runs'
 * messages) and its turns' Actions from every run exported. Nothing is read from the server.
 */
export async function readExportedCases(
  converter: LoadedDataConverter,
  paths: readonly string[],
): Promise<KeptCase[]> {
  const byConversation = new Map<string, RunHistory[]>();
  for (const file of await historyFiles(paths)) {
    const { conversationId, ...run } = await exportedRun(file);
    byConversation.set(conversationId, [...(byConversation.get(conversationId) ?? []), run]);
  }
  const store = ContentStore.of(converter);
  return Promise.all(
    [...byConversation].map(async ([caseId, runs]) => {
      // The latest run is the one no other run continued from.
      const continued = new Set(
        runs.map((run) => run.events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId),
      );
      const latest = runs.find((run) => !continued.has(run.runId)) ?? (runs.at(-1) as RunHistory);
      const entries = await historyEntries(latest.events, converter);
      const messages = await Promise.all(
        entries.map((entry, index) => resolveEntry(entry, store, caseId, index)),
      );
      const options = await optionsOf(converter, latest.events, `${caseId} (exported)`);
      return keptCaseOf(caseId, options, messages, await turnResults(converter, runs));
    }),
  );
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
