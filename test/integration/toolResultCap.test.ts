import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../../src/contract/limits.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const dump: AgentTool = {
  name: 'dump',
  label: 'Dump',
  description: 'Returns a lot of text',
  inputSchema: { type: 'object', properties: { kilobytes: { type: 'integer' } }, required: ['kilobytes'] },
  parallelToolExecute: true,
  execute: (_id, args) => textResult('x'.repeat(Number(args.kilobytes) * 1024)),
};

async function dumpOnce(agent: TestAgent, kilobytes: number): Promise<ToolResultMessage> {
  agent.model.enqueue(
    { kind: 'toolCalls', toolCalls: [{ id: 'call_dump', name: 'dump', arguments: { kilobytes } }] },
    { kind: 'text', text: 'Read it.' },
  );
  const conversation = await agent.client.startConversation({ systemPrompt: '' });
  expect(await conversation.send('dump it')).toMatchObject({ status: 'completed' });
  return (await conversation.messages())[2] as ToolResultMessage;
}

describe('oversized tool results', () => {
  let agent: TestAgent;
  let capped: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [dump] });
    capped = await startTestAgent({ tools: [dump], maxToolResultBytes: 4096 });
  });
  afterAll(async () => {
    await agent?.close();
    await capped?.close();
  });

  it('cuts a result above the default 4 MB cap and tells the model', async () => {
    const result = await dumpOnce(agent, 5 * 1024);
    expect(result.content[0]?.text).toHaveLength(DEFAULT_MAX_TOOL_RESULT_BYTES);
    expect(result.content[1]?.text).toContain('Tool result truncated: it had 5242880 bytes');
    const sent = agent.model.lastRequest()?.body.messages[2];
    expect(sent).toMatchObject({ role: 'tool', tool_call_id: 'call_dump' });
    expect(JSON.stringify(sent)).toContain('Tool result truncated');
  });

  it('passes a 1 MB result whole, to the transcript and to the model', async () => {
    const result = await dumpOnce(agent, 1024);
    expect(result.content).toEqual([{ type: 'text', text: 'x'.repeat(1024 * 1024) }]);
    const sent = agent.model.lastRequest()?.body.messages[2];
    expect(sent).toMatchObject({ role: 'tool', tool_call_id: 'call_dump', content: 'x'.repeat(1024 * 1024) });
  });

  it('honours the worker option maxToolResultBytes', async () => {
    const result = await dumpOnce(capped, 8);
    expect(result.content[0]?.text).toHaveLength(4096);
    expect(result.content[1]?.text).toContain('only the first 4096 are shown');
  });
});
