import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { ConversationWorkflow } from '../contract/definitions.ts';
import type { ConversationCarryOver, PendingMessage } from '../contract/protocol.ts';
import { YIEM_AGENT, YIEM_STATUS } from '../contract/searchAttributes.ts';
import { resolveConversationSettings, userTextProblem } from '../contract/settings.ts';
import type { ConversationOptions, ForkOptions } from '../contract/types/conversation.ts';
import { decodeFromPayloadsAtIndex } from './historyPayloads.ts';
import { startConversationWorkflow } from './startConversation.ts';
import { readTranscript, readTranscriptEntries } from './transcriptReader.ts';
import { readTurnBoundaries, turnStartIndex } from './turnBoundaries.ts';

/** A started fork, for `Conversation.fork` to wrap. */
export interface StartedFork {
  handle: WorkflowHandle<ConversationWorkflow>;
  taskQueue: string;
  options: ConversationOptions;
  /** The messages it starts with, queued for its first turn. */
  queued: string[];
}

/**
 * Starts a new conversation from turn `atTurn` of `source`: the transcript before that turn (large
 * messages by reference, nothing copied in the payload store), that turn's user messages (or the
 * edited one) queued, on the source's task queue with its options but for the ones given.
 * `checkMessage` refuses a queued message the fork could not take, before anything starts.
 */
export async function forkConversation(
  source: WorkflowHandle<ConversationWorkflow>,
  fork: ForkOptions,
  checkMessage: (text: string, taskQueue: string) => Promise<void>,
): Promise<StartedFork> {
  const [description, boundaries] = await Promise.all([source.describe(), readTurnBoundaries(source)]);
  const start = turnStartIndex(source.workflowId, boundaries, fork.atTurn, true);
  const { status, starts } = boundaries;
  const turnEnd =
    fork.atTurn < status.turn
      ? (starts.starts[fork.atTurn + 1 - starts.firstTurn] as number)
      : status.messageCount;
  const [entries, turnMessages, sourceOptions] = await Promise.all([
    readTranscriptEntries(source, { limit: start }),
    readTranscript(source, { fromIndex: start, limit: turnEnd - start }),
    startOptions(source, description.runId),
  ]);
  const options: ConversationOptions = {
    ...sourceOptions,
    ...(fork.model !== undefined ? { model: fork.model } : {}),
    ...(fork.systemPrompt !== undefined ? { systemPrompt: fork.systemPrompt } : {}),
    ...(fork.tools !== undefined ? { tools: fork.tools } : {}),
  };
  // The turn's own user messages come first in its part of the transcript; the replies follow.
  const firstReply = turnMessages.findIndex((message) => message.role !== 'user');
  const original = turnMessages
    .slice(0, firstReply === -1 ? turnMessages.length : firstReply)
    .map((message) => message.content as string);
  const queued = fork.editMessage !== undefined ? [fork.editMessage] : original;
  const { maxMessageBytes } = resolveConversationSettings(options);
  for (const text of queued) {
    const problem = userTextProblem(text, maxMessageBytes);
    if (problem) throw new Error(`The fork's message is refused: ${problem}`);
    await checkMessage(text, description.taskQueue);
  }
  const now = Date.now();
  const pending: PendingMessage[] = queued.map((text, id) => ({ id, text, timestamp: now, awaited: false }));
  const carried: ConversationCarryOver = {
    messages: entries,
    pending,
    nextMessageId: pending.length,
    turn: fork.atTurn - 1,
    turnStarts: {
      firstTurn: starts.firstTurn,
      starts: starts.starts.slice(0, fork.atTurn - starts.firstTurn),
    },
    lastTurn: null,
    ending: false,
  };
  const forkedFrom = { conversationId: source.workflowId, runId: description.runId, atTurn: fork.atTurn };
  const handle = await startConversationWorkflow(source.client, {
    id: fork.id ?? `${source.workflowId}-fork-${randomUUID().slice(0, 8)}`,
    taskQueue: description.taskQueue,
    options,
    title: fork.title ?? `fork of ${source.workflowId} at turn ${fork.atTurn}`,
    agent: description.typedSearchAttributes.get(YIEM_AGENT) ?? description.taskQueue,
    // A fork keeps its source's choice; a source on a namespace without yiem's attributes gets them.
    liveSearchAttributes:
      description.typedSearchAttributes.get(YIEM_AGENT) === undefined ||
      description.typedSearchAttributes.get(YIEM_STATUS) !== undefined,
    carried,
    forkedFrom,
  });
  return { handle, taskQueue: description.taskQueue, options, queued };
}

/** The options a conversation's run started with (every run of a conversation gets the same ones). */
export async function startOptions(handle: WorkflowHandle, runId: string): Promise<ConversationOptions> {
  const { client } = handle;
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: handle.workflowId, runId },
    maximumPageSize: 1,
  });
  const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started)
    throw new Error(`The history of conversation ${handle.workflowId} does not begin with its start`);
  return decodeFromPayloadsAtIndex<ConversationOptions>(
    client.options.loadedDataConverter,
    0,
    started.input?.payloads,
  );
}
