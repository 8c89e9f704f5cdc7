import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { expect, inject, it } from 'vitest';
import { ToolRegistry } from '../../activities/registry/registry.ts';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { startScriptedModel } from '../../src/testing/index.ts';
import { AgentPlugin } from '../../src/worker/plugin.ts';
import { workflowBundle } from '../support/agentHarness.ts';
import { counterServer } from '../support/mcpServers.ts';

it("AgentPlugin's mcpServers: a stateful server keeps one session per conversation", async () => {
  const address = inject('temporalAddress');
  const taskQueue = `mcp-plugin-${randomUUID()}`;
  const model = await startScriptedModel();
  const clientConnection = await Connection.connect({ address });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    plugins: [
      new AgentPlugin(
        {
          registry: new ToolRegistry(),
          model: {
            baseURL: model.baseURL,
            apiKey: 'k',
            model: 'scripted',
            timeoutMs: 5_000,
            maxContextBytes: 1_000_000,
          },
          getClient: async () => new Client({ connection: clientConnection }),
        },
        { mcpServers: { counter: { ...counterServer(), session: 'conversation' } } },
      ),
    ],
  });
  const agents = new AgentClient({ address, taskQueue });
  const increment = async (conversation: Conversation): Promise<string | undefined> => {
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'counter__increment', arguments: {} }] },
      { kind: 'text', text: 'Counted.' },
    );
    await conversation.send('count');
    const results = (await conversation.messages()).filter(
      (m): m is ToolResultMessage => m.role === 'toolResult',
    );
    return results.at(-1)?.content[0]?.text?.split(' (')[0];
  };
  try {
    await worker.runUntil(async () => {
      const first = await agents.startConversation({ systemPrompt: '' });
      const second = await agents.startConversation({ systemPrompt: '' });
      expect(await increment(first)).toBe('count 1');
      expect(await increment(first)).toBe('count 2');
      expect(await increment(second)).toBe('count 1');
      expect(await increment(first)).toBe('count 3');
      const events = (await first.handle.fetchHistory()).events ?? [];
      const queues = events.flatMap(
        (event) => event.activityTaskScheduledEventAttributes?.taskQueue?.name ?? [],
      );
      expect(queues.filter((queue) => queue.startsWith(`${taskQueue}@mcp-`))).toHaveLength(3);
    });
  } finally {
    await agents.close();
    await clientConnection.close();
    await connection.close();
    await model.close();
  }
});
