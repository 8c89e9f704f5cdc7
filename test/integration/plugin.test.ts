import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { expect, inject, it } from 'vitest';
import { ToolRegistry } from '../../activities/registry/registry.ts';
import { AgentClient } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import { startScriptedModel } from '../../src/testing/index.ts';
import { AgentPlugin } from '../../src/worker/plugin.ts';
import { workflowBundle } from '../support/agentHarness.ts';

it('AgentPlugin turns a worker of your own into an agent worker', async () => {
  const address = inject('temporalAddress');
  const taskQueue = `plugin-${randomUUID()}`;
  const model = await startScriptedModel();
  const registry = new ToolRegistry();
  registry.registerTool({
    name: 'add',
    label: 'Add',
    description: 'Adds two numbers',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
    parallelToolExecute: true,
    execute: (_id, args) => textResult(String(Number(args.a) + Number(args.b))),
  });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: { ownActivity: async () => 'mine' },
    plugins: [
      new AgentPlugin({
        registry,
        model: {
          baseURL: model.baseURL,
          apiKey: 'k',
          model: 'scripted',
          timeoutMs: 5_000,
          maxContextBytes: 1_000_000,
        },
      }),
    ],
  });
  const agents = new AgentClient({ address, taskQueue });
  try {
    await worker.runUntil(async () => {
      model.enqueue(
        { kind: 'toolCalls', toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
        { kind: 'text', text: 'It is 5.' },
      );
      const conversation = await agents.startConversation({ systemPrompt: '' });
      expect(await conversation.send('2+3?')).toMatchObject({ status: 'completed', reply: 'It is 5.' });
      expect(model.lastRequest()?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: '5' });
    });
  } finally {
    await agents.close();
    await connection.close();
    await model.close();
  }
});
