import type { AgentClient } from '../../src/client/client.ts';
import { encodedBytes, largestPayload, storedHistory } from '../history.ts';
import { largeTurnAnswer, largeTurnText } from '../scriptedReplies.ts';
import { type Summary, summarize } from '../stats.ts';
import type { WorkerHandle } from '../workerHandle.ts';

/** Each user message; every tenth turn also has a tool result of {@link TOOL_RESULT_KB} KB. */
export const LARGE_MESSAGE_BYTES = 100_000;
export const TOOL_RESULT_KB = 1024;
export const TOOL_EVERY = 10;
/** The conversation continues as new this often, so the carried state is measured too. */
export const TURNS_PER_RUN = 50;

export interface LargeContentPoint {
  turn: number;
  /** Message and tool result bytes the conversation holds after this turn. */
  contentMb: number;
  /** Largest history bytes one turn added, over the turns since the previous point. */
  maxTurnAddedBytes: number;
  /** The largest a run's history was, as the server stores it, since the previous point. */
  runHistoryBytes: number;
  /** The largest payload in any history since the previous point. */
  largestPayloadBytes: number;
  turnMs: Summary;
  workerRssMb: number;
  workerHeapMb: number;
}

export interface LargeContentResult {
  turns: number;
  points: LargeContentPoint[];
}

/**
 * (i) One conversation whose content grows far past Temporal's payload limit: history bytes per turn
 * and worker memory against content size.
 */
export async function measureLargeContent(
  agents: AgentClient,
  worker: WorkerHandle,
  checkpoints: number[],
): Promise<LargeContentResult> {
  const conversation = await agents.startConversation({
    systemPrompt: 'You read large documents.',
    maxTurnsPerRun: TURNS_PER_RUN,
  });
  const points: LargeContentPoint[] = [];
  const last = Math.max(...checkpoints);
  let contentBytes = 0;
  let previous = { runId: '', bytes: 0 };
  let maxAdded = 0;
  let maxRunBytes = 0;
  let maxPayload = 0;
  let turnMs: number[] = [];
  for (let turn = 1; turn <= last; turn++) {
    const withTool = turn % TOOL_EVERY === 0;
    const started = performance.now();
    const result = await conversation.send(
      largeTurnText(turn, LARGE_MESSAGE_BYTES, withTool ? TOOL_RESULT_KB : undefined),
    );
    turnMs.push(performance.now() - started);
    if (result.reply !== largeTurnAnswer(turn)) throw new Error(`Turn ${turn} answered ${result.status}`);
    contentBytes += LARGE_MESSAGE_BYTES + (withTool ? TOOL_RESULT_KB * 1024 : 0);
    const history = await storedHistory(conversation.handle);
    const runId = String(
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId,
    );
    const bytes = encodedBytes(history);
    if (runId === previous.runId) maxAdded = Math.max(maxAdded, bytes - previous.bytes);
    previous = { runId, bytes };
    maxRunBytes = Math.max(maxRunBytes, bytes);
    maxPayload = Math.max(maxPayload, largestPayload(history));
    if (!checkpoints.includes(turn)) continue;
    const memory = await worker.memory();
    points.push({
      turn,
      contentMb: contentBytes / 1e6,
      maxTurnAddedBytes: maxAdded,
      runHistoryBytes: maxRunBytes,
      largestPayloadBytes: maxPayload,
      turnMs: summarize(turnMs),
      workerRssMb: memory.rss / 1e6,
      workerHeapMb: memory.heapUsed / 1e6,
    });
    maxAdded = 0;
    maxRunBytes = 0;
    maxPayload = 0;
    turnMs = [];
  }
  const messages = await conversation.messages();
  if (messages.filter((message) => message.role === 'user').length !== last) {
    throw new Error('messages() did not return every user message');
  }
  await conversation.end();
  return { turns: last, points };
}
