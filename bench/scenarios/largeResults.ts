import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { BenchEnvironment } from '../environment.ts';
import { callDirective } from '../scriptedReplies.ts';

/** What each kind of tool returns; the worker cuts it to its 4 MB `maxToolResultBytes`. */
export const LARGE_RESULT_KB = 12 * 1024;

/** The tests' MCP server, which has a `large` tool; started by path, as any stdio server is. */
const COUNTER_SERVER = fileURLToPath(new URL('../../test/fixtures/mcp/counterServer.ts', import.meta.url));

const WRITTEN_TOOL = {
  name: 'largeWritten',
  label: 'Large written',
  description: 'Returns 12 MB of text from the sandbox',
  inputSchema: { type: 'object', properties: {} },
  executeCode: `return textResult("w".repeat(${LARGE_RESULT_KB * 1024}));`,
};

const KINDS = [
  { kind: 'plain tool', tool: 'largeResult', args: { kilobytes: LARGE_RESULT_KB, tag: 'plain' } },
  { kind: 'written tool (sandbox)', tool: WRITTEN_TOOL.name, args: {} },
  { kind: 'MCP tool (stdio)', tool: 'counter__large', args: { kilobytes: LARGE_RESULT_KB } },
] as const;

export interface LargeResultPoint {
  kind: string;
  /** What the model read: the cut text's length and note, or the error. */
  outcome: string;
  /** The big call's turn, prompt to answer. */
  bigTurnMs: number;
  /** How many turns the bystander finished while the big turn ran, and the longest of them. */
  bystanderTurns: number;
  bystanderLongestMs: number;
  /** The worker's longest event-loop block during the big turn (perf_hooks.monitorEventLoopDelay). */
  eventLoopMaxMs: number;
  /** Worker RSS after a forced GC, before and after the big turn. */
  rssBeforeMb: number;
  rssAfterMb: number;
}

/**
 * (j) A tool of each kind returns 12 MB while a bystander conversation on the same worker keeps
 * talking: how long the bystander's turns take, how long the worker's event loop is blocked, and
 * whether the worker's memory returns to its level. One run per kind, on one fresh worker process.
 */
export async function measureLargeResults(env: BenchEnvironment): Promise<LargeResultPoint[]> {
  const toolsDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-bench-written-'));
  const { worker, agents } = await env.startWorker({
    selfWritingDir: toolsDir,
    mcpServers: { counter: { command: process.execPath, args: ['--import', 'tsx', COUNTER_SERVER] } },
  });
  try {
    const writer = await agents.startConversation({ systemPrompt: '' });
    await writer.send(callDirective('writeTool', 1, WRITTEN_TOOL));
    await writer.end();
    const points: LargeResultPoint[] = [];
    for (const { kind, tool, args } of KINDS) {
      const bystander = await agents.startConversation({ systemPrompt: '' });
      await bystander.send('warm up');
      const before = await worker.memory();
      const big = await agents.startConversation({ systemPrompt: '' });
      const started = performance.now();
      let bigDone = false;
      const bigTurn = big.send(callDirective(tool, 1, args)).finally(() => {
        bigDone = true;
      });
      const bystanderMs: number[] = [];
      while (!bigDone) {
        const turnStarted = performance.now();
        await bystander.send('hello');
        bystanderMs.push(performance.now() - turnStarted);
      }
      await bigTurn;
      const bigTurnMs = performance.now() - started;
      const result = (await big.messages()).find(
        (message): message is ToolResultMessage => message.role === 'toolResult',
      );
      await big.end();
      await bystander.end();
      const after = await worker.memory();
      points.push({
        kind,
        outcome: result?.isError
          ? `error: ${result.content[0]?.text.slice(0, 120)}`
          : `${result?.content[0]?.text.length} chars + note`,
        bigTurnMs,
        bystanderTurns: bystanderMs.length,
        bystanderLongestMs: Math.max(...bystanderMs),
        eventLoopMaxMs: after.eventLoopMaxMs,
        rssBeforeMb: before.rss / 1e6,
        rssAfterMb: after.rss / 1e6,
      });
    }
    return points;
  } finally {
    await worker.stop();
    await rm(toolsDir, { recursive: true, force: true });
  }
}
