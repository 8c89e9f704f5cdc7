import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEval } from '../../src/client/evals/runEval.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import type { ReplyHandler } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** Each turn's report: together far over Temporal's 2 MB payload limit. */
const REPORT_BYTES = 1_500_000;
const TURNS = ['report on shelf A', 'report on shelf B'];
/** What the user pastes in each turn: a large message, within a conversation's 100 KB. */
const PASTED = 'x'.repeat(90_000);
/** Temporal warns above this payload size; nothing of the eval's own comes near it. */
const LARGEST_INLINE_PAYLOAD = 512 * 1024;

function reportTool(runs: string[]): ActivityTool {
  return {
    name: 'shelfReport',
    label: 'shelfReport',
    description: 'A long report on a shelf',
    parallelToolExecute: true,
    inputSchema: { type: 'object', properties: { shelf: { type: 'string' } } },
    execute: async (_toolCallId, args) => {
      runs.push(String(args.shelf));
      return textResult(`${String(args.shelf)}:${'r'.repeat(REPORT_BYTES)}`);
    },
  };
}

type Message = { role: string; content: string | null };
/** Asks for the shelf's report, then says how long it was. */
const reporter: ReplyHandler = (request) => {
  const messages = request.body.messages as Message[];
  const last = messages.at(-1);
  if (last?.role === 'tool')
    return { kind: 'text', text: `The report has ${last.content?.length} characters.` };
  const shelf = /shelf (\w)/.exec(last?.content ?? '')?.[1] ?? '?';
  return { kind: 'toolCalls', toolCalls: [{ name: 'shelfReport', arguments: { shelf } }] };
};

/** The largest payload a workflow's history holds inline, in bytes. */
async function largestPayload(handle: WorkflowHandle): Promise<number> {
  let largest = 0;
  const visit = (value: unknown): void => {
    if (value instanceof Uint8Array) largest = Math.max(largest, value.byteLength);
    else if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(visit);
  };
  visit((await handle.fetchHistory()).events);
  return largest;
}

describe('an eval of a kept conversation with large messages and tool results', () => {
  const keptRuns: string[] = [];
  const candidateRuns: string[] = [];
  let kept: TestAgent;
  let candidate: TestAgent;
  let keptId: string;

  beforeAll(async () => {
    [kept, candidate] = await Promise.all([
      startTestAgent({ tools: [reportTool(keptRuns)] }),
      startTestAgent({ tools: [reportTool(candidateRuns)] }),
    ]);
    kept.model.respond(reporter);
    candidate.model.respond(reporter);
    const conversation = await kept.client.startConversation({ systemPrompt: 'You read reports.' });
    for (const turn of TURNS) await conversation.send(`${turn}\n${PASTED}`);
    await conversation.end();
    keptId = conversation.id;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([kept?.close(), candidate?.close()]);
  });

  it('replays it from the recorded results, no payload of the run, its case or its replay carrying them inline', async () => {
    const runId = `large-${Date.now().toString(36)}`;
    const report = await runEval(candidate.client, {
      conversations: [keptId],
      candidate: { taskQueue: candidate.taskQueue },
      runId,
      expectations: { all: { replyContains: `has ${REPORT_BYTES + 2} characters` } },
    });
    expect(candidateRuns).toEqual([]);
    expect(report.summary).toMatchObject({ cases: 1, passed: 1, diverged: 0 });
    const [only] = report.cases;
    expect(only?.turns.map((turn) => turn.new.toolCalls[0]?.answer)).toEqual(['recorded', 'recorded']);
    expect(only?.turns.map((turn) => turn.new.toolCalls[0]?.result.length)).toEqual([
      REPORT_BYTES + 2,
      REPORT_BYTES + 2,
    ]);

    const workflow = candidate.client.client.workflow;
    for (const id of [`eval-${runId}`, `eval-${runId}/${keptId}`, only?.conversationId as string])
      expect(await largestPayload(workflow.getHandle(id)), id).toBeLessThan(LARGEST_INLINE_PAYLOAD);
  }, 180_000);
});
