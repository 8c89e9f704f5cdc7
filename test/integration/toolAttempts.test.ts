import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool, ToolCallInfo } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

/** What `currentToolCall()` returned on each attempt. */
const seen: ToolCallInfo[] = [];

const flaky: AgentTool = {
  name: 'flaky',
  label: 'Flaky',
  description: 'Fails on its first attempt',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  policy: { retry: { maximumAttempts: 3, initialInterval: '50 milliseconds' } },
  execute: () => {
    const call = currentToolCall();
    seen.push(call);
    if (call.attempt === 1) throw new Error('payment service hiccup');
    return textResult(`charged once with key ${call.idempotencyKey}`);
  },
};

describe('attempt number and idempotency key', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [flaky] });
  });
  afterAll(async () => agent?.close());

  it('gives every attempt of a call the same key, and each call its own', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name: 'flaky', arguments: {} }] },
      { kind: 'text', text: 'Paid.' },
      // A model that reuses a call id in a later turn still gets a fresh key.
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name: 'flaky', arguments: {} }] },
      { kind: 'text', text: 'Paid again.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('pay')).toMatchObject({ status: 'completed', reply: 'Paid.' });
    expect(await conversation.send('pay again')).toMatchObject({ status: 'completed', reply: 'Paid again.' });

    expect(seen.map(({ toolCallId, attempt }) => [toolCallId, attempt])).toEqual([
      ['call_pay', 1],
      ['call_pay', 2],
      ['call_pay', 1],
      ['call_pay', 2],
    ]);
    expect(seen[0]).toMatchObject({ conversationId: conversation.id, toolName: 'flaky' });
    expect(seen[1]?.idempotencyKey).toBe(seen[0]?.idempotencyKey);
    expect(seen[3]?.idempotencyKey).toBe(seen[2]?.idempotencyKey);
    expect(seen[2]?.idempotencyKey).not.toBe(seen[0]?.idempotencyKey);
    expect(() => currentToolCall()).toThrow('only while a tool executes');
  });
});
