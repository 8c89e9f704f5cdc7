import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolExecutionMode } from '../../src/contract/types/conversation.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

interface Span {
  id: string;
  start: number;
  end: number;
}
const spans: Span[] = [];

function sleepTool(name: string, parallelToolExecute: boolean): AgentTool {
  return {
    name,
    label: name,
    description: 'Sleeps for ms milliseconds',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    parallelToolExecute,
    execute: async (id, args) => {
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
      spans.push({ id, start, end: Date.now() });
      return textResult(`${id} slept`);
    },
  };
}

const overlaps = (a: Span, b: Span): boolean => a.start < b.end && b.start < a.end;
const span = (id: string): Span => {
  const found = spans.find((s) => s.id === id);
  if (!found) throw new Error(`${id} did not run`);
  return found;
};

describe('execution modes', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [sleepTool('nap', true), sleepTool('exclusiveNap', false)] });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    spans.length = 0;
  });

  async function runBatch(mode: ToolExecutionMode, calls: Array<[id: string, tool: string, ms: number]>) {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: calls.map(([id, name, ms]) => ({ id, name, arguments: { ms } })) },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '', toolExecution: mode });
    await conversation.send('run them');
    const messages = await conversation.messages();
    return messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => m.toolCallId);
  }

  it('parallel mode starts calls together and returns results in the order asked', async () => {
    const order = await runBatch('parallel', [
      ['slow', 'nap', 600],
      ['fast', 'nap', 50],
      ['medium', 'nap', 300],
    ]);
    expect(order).toEqual(['slow', 'fast', 'medium']);
    expect(overlaps(span('slow'), span('fast'))).toBe(true);
    expect(overlaps(span('slow'), span('medium'))).toBe(true);
    expect(span('fast').end).toBeLessThan(span('slow').end);
  });

  it('runs a tool with parallelToolExecute false alone, in its place in the order', async () => {
    const order = await runBatch('parallel', [
      ['a', 'nap', 200],
      ['b', 'nap', 200],
      ['alone', 'exclusiveNap', 200],
      ['c', 'nap', 200],
    ]);
    expect(order).toEqual(['a', 'b', 'alone', 'c']);
    expect(overlaps(span('a'), span('b'))).toBe(true);
    expect(span('alone').start).toBeGreaterThanOrEqual(Math.max(span('a').end, span('b').end));
    expect(span('c').start).toBeGreaterThanOrEqual(span('alone').end);
  });

  it('sequential mode runs one call after another, in order', async () => {
    const order = await runBatch('sequential', [
      ['first', 'nap', 200],
      ['second', 'nap', 50],
      ['third', 'nap', 100],
    ]);
    expect(order).toEqual(['first', 'second', 'third']);
    expect(span('second').start).toBeGreaterThanOrEqual(span('first').end);
    expect(span('third').start).toBeGreaterThanOrEqual(span('second').end);
  });
});
