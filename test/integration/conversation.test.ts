import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const echoTool: AgentTool = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`echo: ${String(args.text)}`),
};

describe('a conversation', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [echoTool] });
  });
  afterAll(async () => agent?.close());

  it('answers a prompt with the model reply and keeps the transcript', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Hello there!' });
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    const result = await conversation.send('Hi');
    expect(result).toMatchObject({ turn: 1, status: 'completed', reply: 'Hello there!' });
    const messages = await conversation.messages();
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const request = agent.model.lastRequest();
    expect(request?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(request?.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'echo', description: 'Echoes its text back', parameters: echoTool.inputSchema },
      },
    ]);
  });

  it('runs a tool call and feeds its result back to the model', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_e1', name: 'echo', arguments: { text: 'ping' } }] },
      { kind: 'text', text: 'The tool said ping.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('Use echo');
    expect(result.reply).toBe('The tool said ping.');
    const second = agent.model.lastRequest()?.body.messages ?? [];
    expect(second.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_e1', content: 'echo: ping' });
    const messages = await conversation.messages();
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });
});

describe('the plain Temporal client', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it('talks to a conversation through the exported workflow and its update and queries', async () => {
    const { conversationWorkflow, promptUpdate, statusQuery, transcriptQuery } = await import(
      '../../src/index.ts'
    );
    agent.model.enqueue({ kind: 'text', text: 'plain client works' });
    const handle = await agent.client.client.workflow.start(conversationWorkflow, {
      workflowId: `plain-${Date.now()}`,
      taskQueue: agent.taskQueue,
      args: [{ systemPrompt: 'Plain.' }],
    });
    const result = await handle.executeUpdate(promptUpdate, { args: ['hello'] });
    expect(result).toMatchObject({ status: 'completed', reply: 'plain client works' });
    expect((await handle.query(transcriptQuery)).messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect((await handle.query(statusQuery)).turn).toBe(1);
  });
});
