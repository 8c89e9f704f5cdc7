import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatEndpoint } from '../../src/client/chatEndpoint.ts';
import { AgentClient } from '../../src/client/client.ts';
import { serveConsole } from '../../src/client/consoleServer.ts';
import { NoWorkerError } from '../../src/client/errors.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { yiemWithInput as yiem } from '../support/cli.ts';

/** "Fails fast": well within the 10 s the issue allows, bounded generously for a loaded machine. */
const FAST_MS = 10_000;

describe('a task queue that no worker polls', () => {
  let agent: TestAgent;
  let typo: string;
  let client: AgentClient;
  beforeAll(async () => {
    agent = await startTestAgent();
    // A conversation on the served queue: the queues named in the error come from conversations.
    agent.model.enqueue({ kind: 'text', text: 'Hello.' });
    await (await agent.client.startConversation({ systemPrompt: '' })).send('hi');
    typo = `my-agnet-${randomUUID()}`;
    client = new AgentClient({ address: agent.address, taskQueue: typo });
  });
  afterAll(async () => {
    await client.close();
    await agent.close();
  });

  /** The conversations left running on `queue`. */
  async function conversationsOn(queue: string): Promise<number> {
    let count = 0;
    for await (const _ of agent.client.client.workflow.list({
      query: `TaskQueue = '${queue}' AND ExecutionStatus = 'Running'`,
    }))
      count++;
    return count;
  }

  it('fails a start from the library within seconds, naming the queue and the served ones, starting nothing', async () => {
    const began = Date.now();
    const error = await client.startConversation({ systemPrompt: '' }).catch((caught: unknown) => caught);
    expect(Date.now() - began).toBeLessThan(FAST_MS);
    expect(error).toBeInstanceOf(NoWorkerError);
    expect((error as NoWorkerError).message).toContain(`No worker polls task queue "${typo}"`);
    expect((error as NoWorkerError).message).toContain(`"${agent.taskQueue}"`);
    expect((error as NoWorkerError).queuesWithWorkers).toContain(agent.taskQueue);
    expect(await conversationsOn(typo)).toBe(0);
  });

  it('fails a send to a running conversation whose queue has no worker, naming the conversation', async () => {
    const unchecked = new AgentClient({ address: agent.address, taskQueue: typo, checkWorkers: false });
    try {
      const started = await unchecked.startConversation({ systemPrompt: '' });
      const conversation = client.getConversation(started.id);
      const began = Date.now();
      const error = await conversation.send('hello?').catch((caught: unknown) => caught);
      expect(Date.now() - began).toBeLessThan(FAST_MS);
      expect(error).toBeInstanceOf(NoWorkerError);
      expect((error as Error).message).toContain(`conversation ${started.id}`);
      expect((error as Error).message).toContain(`task queue "${typo}"`);
      await started.handle.terminate('test done');
    } finally {
      await unchecked.close();
    }
  });

  it('fails `yiem send` within seconds with the queue named, leaving no conversation', async () => {
    const began = Date.now();
    const sent = await yiem(['send', 'hi', '--address', agent.address, '--task-queue', typo]);
    expect(Date.now() - began).toBeLessThan(FAST_MS + 5_000); // plus the CLI's own start
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain(`No worker polls task queue "${typo}"`);
    expect(sent.stderr).toContain(`"${agent.taskQueue}"`);
    expect(sent.stderr).not.toContain('Started conversation');
    expect(await conversationsOn(typo)).toBe(0);
  });

  it('fails `yiem chat` within seconds with the queue named, leaving no conversation', async () => {
    const began = Date.now();
    const chat = await yiem(['chat', '--address', agent.address, '--task-queue', typo], 'hi\n/exit\n');
    expect(Date.now() - began).toBeLessThan(FAST_MS + 5_000);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain(`No worker polls task queue "${typo}"`);
    expect(await conversationsOn(typo)).toBe(0);
  });

  it('answers a chat endpoint request within seconds with the queue named, leaving no conversation', async () => {
    const endpoint = createChatEndpoint({ client, newConversation: () => ({ systemPrompt: 'You help.' }) });
    const began = Date.now();
    const response = await endpoint.fetch(
      new Request('http://app.example/api/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: `chat-${randomUUID()}`,
          trigger: 'submit-message',
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
        }),
      }),
    );
    expect(Date.now() - began).toBeLessThan(FAST_MS);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await response.text()).toContain(`No worker polls task queue "${typo}"`);
    expect(await conversationsOn(typo)).toBe(0);
  });

  it("answers the console's chat within seconds with the queue named, leaving no conversation", async () => {
    const console_ = await serveConsole({ client, newConversation: () => ({ systemPrompt: 'You help.' }) });
    try {
      const began = Date.now();
      const response = await fetch(`${console_.url}api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: `console-${randomUUID()}`,
          trigger: 'submit-message',
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
        }),
      });
      expect(Date.now() - began).toBeLessThan(FAST_MS);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(await response.text()).toContain(`No worker polls task queue "${typo}"`);
      expect(await conversationsOn(typo)).toBe(0);
    } finally {
      await console_.close();
    }
  });
});
