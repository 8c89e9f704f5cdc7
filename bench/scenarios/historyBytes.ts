import type { WorkflowHandle } from '@temporalio/client';
import type { AgentClient } from '../../src/client/client.ts';
import { baselinePromptUpdate } from '../baseline/workflow.ts';
import type { BenchEnvironment } from '../environment.ts';
import { historyBytes } from '../history.ts';
import { callDirective } from '../scriptedReplies.ts';
import { sendOk } from './overhead.ts';

/** Size of each user message: the context grows by about this much per turn. */
export const MESSAGE_BYTES = 2_000;

/** A user message of `bytes` bytes: `head` on its first line (a bench directive, say), then padding. */
export function paddedText(head: string, bytes = MESSAGE_BYTES): string {
  return `${head}\n${'x'.repeat(bytes)}`.slice(0, bytes);
}

export interface HistoryBytesPoint {
  turn: number;
  /** Bytes of messages before this turn's model call (user texts and replies, as JSON). */
  contextBytes: number;
  oursAdded: number;
  baselineAdded: number;
  oursTotal: number;
  baselineTotal: number;
  /**
   * On the last point: what ours added for a tool turn right after it (a message of the same size
   * asking for two calls of a tool that answers at once, then "done").
   */
  oursToolTurnAdded?: number;
}

/** The history goals of issue 49 at turn 100 with 2 KB messages, in bytes (1 KB = 1,024 bytes). */
export const HISTORY_GOAL_BYTES = { textTurn: 4.5 * 1024, toolTurn: 9 * 1024 };

/**
 * (d) History bytes added by one turn as the context grows, ours against a baseline workflow that
 * passes the whole context in every model-call activity input. Byte counts are deterministic, so one
 * run suffices.
 */
export async function measureHistoryBytes(
  env: BenchEnvironment,
  agents: AgentClient,
  taskQueue: string,
  checkpoints: number[],
): Promise<HistoryBytesPoint[]> {
  const ours = await agents.startConversation({ systemPrompt: '' });
  const baseline = await env.temporal.workflow.start('baselineConversationWorkflow', {
    taskQueue: `${taskQueue}-baseline`,
    workflowId: `baseline-${ours.id}`,
    args: [''],
  });
  const text = (turn: number) => `${turn} ${'x'.repeat(MESSAGE_BYTES)}`.slice(0, MESSAGE_BYTES);
  const turnBaseline = async (turn: number) => {
    await baseline.executeUpdate(baselinePromptUpdate, { args: [text(turn)] });
  };
  const points: HistoryBytesPoint[] = [];
  const lastTurn = Math.max(...checkpoints);
  for (let turn = 1; turn <= lastTurn; turn++) {
    const measure = checkpoints.includes(turn);
    const before = measure ? await sizes(ours.handle, baseline) : undefined;
    await sendOk(ours, text(turn));
    await turnBaseline(turn);
    if (!before) continue;
    const after = await sizes(ours.handle, baseline);
    const transcript = await ours.messages();
    points.push({
      turn,
      contextBytes: JSON.stringify(transcript.slice(0, -1)).length,
      oursAdded: after.ours - before.ours,
      baselineAdded: after.baseline - before.baseline,
      oursTotal: after.ours,
      baselineTotal: after.baseline,
    });
  }
  const last = points.at(-1);
  if (last) {
    const before = await historyBytes(ours.handle);
    await sendOk(ours, paddedText(callDirective('noop', 2)));
    last.oursToolTurnAdded = (await historyBytes(ours.handle)) - before;
  }
  await ours.end();
  await baseline.terminate('benchmark done');
  return points;
}

async function sizes(ours: WorkflowHandle, baseline: WorkflowHandle) {
  const [oursBytes, baselineBytes] = await Promise.all([historyBytes(ours), historyBytes(baseline)]);
  return { ours: oursBytes, baseline: baselineBytes };
}
