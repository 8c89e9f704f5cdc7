import { randomBytes } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import {
  AesGcmPayloadCodec,
  encryptedDataConverter,
  UNENCRYPTED_REFUSED,
} from '../../src/infrastructure/codec/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const echo: AgentTool = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its arguments',
  inputSchema: { type: 'object' },
  parallelToolExecute: true,
  execute: async (_id, args) => textResult(JSON.stringify(args)),
};

const chatty: AgentTool = {
  name: 'chatty',
  label: 'Chatty',
  description: 'Reports far too much progress, then finishes',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async (_id, _args, _signal, onPartialResult) => {
    onPartialResult({ log: 'x'.repeat(3_000_000) });
    onPartialResult({ step: 2 });
    return textResult('finished');
  },
};

const thrower: AgentTool = {
  name: 'thrower',
  label: 'Thrower',
  description: 'Throws a plain object',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  policy: { retry: { maximumAttempts: 1 } },
  execute: async () => {
    throw { code: 'E_CELLAR', detail: 'the cellar is locked' };
  },
};

/** Bad input from callers and models, each answered with a clear error, and the next turn works. */
describe('bad input gets a clear error and breaks nothing', () => {
  let agent: TestAgent;

  beforeAll(async () => {
    agent = await startTestAgent({ tools: [echo, chatty, thrower] });
  });
  afterAll(async () => {
    await agent?.close();
  });

  const toolResults = async (conversation: { messages(): Promise<unknown[]> }) =>
    ((await conversation.messages()) as ToolResultMessage[]).filter(
      (message) => message.role === 'toolResult',
    );

  it('refuses invalid conversation options in the client, before anything starts', async () => {
    await expect(
      agent.client.startConversation({ systemPrompt: '', toolExecution: 'banana' as never }),
    ).rejects.toThrow(
      /^Invalid conversation options: toolExecution must be "sequential" or "parallel", got "banana"$/,
    );
    await expect(
      agent.client.startConversation({ systemPrompt: '', maxModelCallsPerTurn: 0 }),
    ).rejects.toThrow(
      /^Invalid conversation options: maxModelCallsPerTurn must be a whole number of at least 1, got 0$/,
    );
    agent.model.enqueue({ kind: 'text', text: 'valid' });
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxModelCallsPerTurn: 1 });
    expect(await conversation.send('hi')).toMatchObject({ status: 'completed', reply: 'valid' });
  });

  it('fails a conversation started around the client with invalid options, with the reason', async () => {
    const handle = await agent.client.client.workflow.start('conversationWorkflow', {
      workflowId: `raw-${randomBytes(4).toString('hex')}`,
      taskQueue: agent.taskQueue,
      args: [{ systemPrompt: '', toolExecution: 'banana', maxModelCallsPerTurn: 0 }],
    });
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause?.message).toBe(
      'Invalid conversation options: toolExecution must be "sequential" or "parallel", got "banana"; maxModelCallsPerTurn must be a whole number of at least 1, got 0',
    );
  });

  it('refuses an oversized post() and send() in the client, without retrying, and loses nothing', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await expect(conversation.post('p'.repeat(200_000))).rejects.toThrow(
      /^A message may have at most 100000 bytes; this one has 200000$/,
    );
    // A handle that does not know the conversation's limit still refuses what no conversation accepts.
    const handle = agent.client.getConversation(conversation.id);
    await expect(handle.send('s'.repeat(5_000_000))).rejects.toThrow(
      /^A message may have at most 1000000 bytes; this one has 5000000$/,
    );
    agent.model.enqueue({ kind: 'text', text: 'small is fine' });
    expect(await handle.send('small')).toMatchObject({ status: 'completed', reply: 'small is fine' });
    expect((await conversation.messages()).map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it('answers tool arguments nested 10,000 deep with a clear error the model can act on', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'deep', name: 'echo', arguments: deep }] },
      { kind: 'text', text: 'flattened' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('go deep')).toMatchObject({ status: 'completed', reply: 'flattened' });
    const [result] = await toolResults(conversation);
    expect(result?.isError).toBe(true);
    expect(result?.content).toEqual([
      { type: 'text', text: 'Arguments for "echo" are nested more than 64 levels deep; flatten them' },
    ]);
  });

  it('keeps the result of a tool that reports a 3 MB progress update, and says what was dropped', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'chatty', name: 'chatty', arguments: {} }] },
      { kind: 'text', text: 'it finished' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const progress = conversation.events();
    expect(await conversation.send('report')).toMatchObject({ status: 'completed', reply: 'it finished' });
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'finished' }] });
    const reports: unknown[] = [];
    for await (const event of progress) {
      if (event.type === 'toolProgress') reports.push(event.partialResult);
      if (event.type === 'turnEnd') break;
    }
    expect(reports).toEqual([
      { dropped: 'this progress report had 3000010 bytes; at most 32768 are kept' },
      { step: 2 },
    ]);
  });

  it('shows the model what a tool threw when it is not an Error', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'throw', name: 'thrower', arguments: {} }] },
      { kind: 'text', text: 'the cellar is locked' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('open the cellar')).toMatchObject({ status: 'completed' });
    const [result] = await toolResults(conversation);
    expect(result?.content).toEqual([
      { type: 'text', text: 'Tool "thrower" failed: {"code":"E_CELLAR","detail":"the cellar is locked"}' },
    ]);
  });

  it('reports an empty reply cut off at the output limit instead of calling it completed', async () => {
    agent.model.enqueue({ kind: 'contentBlocks', blocks: [], finishReason: 'length' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('write an essay')).toMatchObject({
      turn: 1,
      status: 'failed',
      reply: '',
      error:
        'The model reached its output limit before writing any reply (finish_reason "length"). Send another message to try again, or raise the model\'s output token limit.',
    });
    agent.model.enqueue({ kind: 'text', text: 'a short essay' });
    expect(await conversation.send('a short one then')).toMatchObject({
      status: 'completed',
      reply: 'a short essay',
    });
  });

  it('starts conversations with a short workflow task timeout, so a dead worker delays them little', async () => {
    agent.model.enqueue({ kind: 'text', text: 'ok' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const description = await conversation.handle.describe();
    expect(description.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds?.toString()).toBe('2');
    expect(await conversation.send('hi')).toMatchObject({ status: 'completed', reply: 'ok' });
  });
});

describe('an encrypting worker refuses unencrypted payloads', () => {
  let agent: TestAgent;
  let plaintextClient: AgentClient;

  beforeAll(async () => {
    const codec = new AesGcmPayloadCodec([{ id: 'k1', key: randomBytes(32) }]);
    agent = await startTestAgent({
      worker: { connection: { dataConverter: encryptedDataConverter(codec) } },
    });
    plaintextClient = new AgentClient({ address: agent.address, taskQueue: agent.taskQueue });
  });
  afterAll(async () => {
    await plaintextClient?.close();
    await agent?.close();
  });

  it('does not let a client without the key write a prompt into a conversation', async () => {
    agent.model.enqueue({ kind: 'text', text: 'encrypted hello' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('hello')).toMatchObject({ status: 'completed', reply: 'encrypted hello' });

    const intruder = plaintextClient.getConversation(conversation.id);
    const refused = intruder.send('PLAINTEXT-PROMPT');
    await expect(refused).rejects.toThrow(WorkflowUpdateFailedError);
    await expect(refused).rejects.toMatchObject({ cause: { message: UNENCRYPTED_REFUSED } });
    // A signal cannot answer; the conversation ignores it (and logs why).
    await intruder.post('PLAINTEXT-POST');
    const started = await plaintextClient.startConversation({ systemPrompt: 'PLAINTEXT-SYSTEM' });
    const failure = await started.handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause?.message).toBe(UNENCRYPTED_REFUSED);

    agent.model.enqueue({ kind: 'text', text: 'still mine' });
    expect(await conversation.send('again')).toMatchObject({ status: 'completed', reply: 'still mine' });
    const texts = (await conversation.messages()).map((message) => message.content);
    expect(JSON.stringify(texts)).not.toContain('PLAINTEXT');
  });
});
