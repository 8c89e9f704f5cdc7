import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../../src/contract/limits.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scriptedModel.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { counterServer } from '../support/mcpServers.ts';

const BIG_KB = 12 * 1024;
const BYSTANDER_TURNS = 3;
/**
 * How far the worker's memory (V8 heap plus the buffers outside it) after a forced GC may stay above
 * its level before the big calls. The 12 MB result and its copies are garbage once the call is done;
 * what stays is what any finished tool call leaves: the transcript's 4 MB cut result in the worker's
 * context cache, decoded and as payload bytes, and the client's own copies (this test's process is
 * the worker's and the client's); three calls keep about 65 MB. Before the fix one call left the
 * worker's RSS 79 MB higher. RSS is not measured: how much freed memory the allocator gives back to
 * the OS varies by tens of megabytes from run to run, so a bound on it fails on a busy machine
 * without any leak.
 */
const MEMORY_GROWTH_BOUND_MB = 96;

const bigPlain: AgentTool = {
  name: 'bigPlain',
  label: 'Big plain',
  description: 'Returns 12 MB of text',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult('p'.repeat(BIG_KB * 1024)),
};

const bigWrittenTool = {
  name: 'bigWritten',
  label: 'Big written',
  description: 'Returns 12 MB of text, from the sandbox',
  inputSchema: { type: 'object', properties: {} },
  executeCode: `return textResult("w".repeat(${BIG_KB * 1024}));`,
};

const BIG_CALLS: Record<string, { name: string; arguments: Record<string, unknown> }> = {
  'big plain': { name: 'bigPlain', arguments: {} },
  'big written': { name: 'bigWritten', arguments: {} },
  'big mcp': { name: 'counter__large', arguments: { kilobytes: BIG_KB } },
};

const forceGc = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

function memoryAfterGcMb(): number {
  forceGc();
  forceGc();
  const { heapUsed, external } = process.memoryUsage();
  return (heapUsed + external) / 1e6;
}

describe('a tool that returns 12 MB leaves the worker free for other conversations', () => {
  let root: string;
  let agent: TestAgent;
  /** Resolves when the model has asked for the big call: from then on the worker runs it and processes its 12 MB. */
  let bigCalled: () => void = () => {};
  /** Holds the big conversation's next model call, so its turn is still running while the bystander talks. */
  let bigFollowUp: Promise<void> = Promise.resolve();

  const reply = async (request: RecordedRequest): Promise<ScriptedReply> => {
    const messages = request.body.messages;
    const first = messages.find((message) => message.role === 'user')?.content;
    const last = messages.at(-1);
    if (first === 'write') {
      return last?.role === 'user'
        ? { kind: 'toolCalls', toolCalls: [{ id: 'write', name: 'writeTool', arguments: bigWrittenTool }] }
        : { kind: 'text', text: 'written' };
    }
    const big = typeof first === 'string' ? BIG_CALLS[first] : undefined;
    if (big && last?.role === 'user') {
      bigCalled();
      return { kind: 'toolCalls', toolCalls: [{ id: 'big', ...big }] };
    }
    if (big) {
      await bigFollowUp;
      return { kind: 'text', text: 'read it' };
    }
    return { kind: 'text', text: `pong ${String(last?.content).replace('ping ', '')}` };
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'yiem-big-'));
    agent = await startTestAgent({
      tools: [bigPlain],
      selfWriting: { toolsDir: join(root, 'tools'), memoryMb: 128 },
      worker: { tools: { mcpServers: { counter: counterServer() } } },
    });
    agent.model.respond(reply);
    const writer = await agent.client.startConversation({ systemPrompt: '' });
    expect(await writer.send('write')).toMatchObject({ reply: 'written' });
    await writer.end();
  });
  afterAll(async () => {
    await agent?.close();
    await rm(root, { recursive: true, force: true });
  });

  let memoryBeforeMb = 0;
  it.each(Object.keys(BIG_CALLS))(
    '%s: the bystander answers its turns while the big call runs',
    async (prompt) => {
      memoryBeforeMb ||= memoryAfterGcMb();
      const bystander = await agent.client.startConversation({ systemPrompt: '' });
      expect(await bystander.send('ping 0')).toMatchObject({ reply: 'pong 0' });
      const called = new Promise<void>((resolve) => {
        bigCalled = resolve;
      });
      let releaseFollowUp = (): void => {};
      bigFollowUp = new Promise((resolve) => {
        releaseFollowUp = resolve;
      });
      const big = await agent.client.startConversation({ systemPrompt: '' });
      let bigDone = false;
      const bigTurn = big.send(prompt).finally(() => {
        bigDone = true;
      });
      await called;
      for (let turn = 1; turn <= BYSTANDER_TURNS; turn++) {
        expect(await bystander.send(`ping ${turn}`)).toMatchObject({ reply: `pong ${turn}` });
      }
      expect(bigDone).toBe(false);
      releaseFollowUp();
      expect(await bigTurn).toMatchObject({ status: 'completed', reply: 'read it' });
      const result = (await big.messages())[2] as ToolResultMessage;
      expect(result.isError).toBe(false);
      expect(result.content[0]?.text).toHaveLength(DEFAULT_MAX_TOOL_RESULT_BYTES);
      expect(result.content[1]?.text).toBe(
        `[Tool result truncated: it had ${BIG_KB * 1024} bytes and only the first ${DEFAULT_MAX_TOOL_RESULT_BYTES} are shown. Ask for a narrower result if you need the rest.]`,
      );
      await big.end();
      await bystander.end();
    },
  );

  it('returns the worker to its memory level after the big calls', () => {
    expect(memoryAfterGcMb() - memoryBeforeMb).toBeLessThan(MEMORY_GROWTH_BOUND_MB);
  });
});
