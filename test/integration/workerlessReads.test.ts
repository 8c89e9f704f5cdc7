import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { serveChatEndpoint } from '../../src/client/chatServer.ts';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import type { ConsoleConversation, ConsoleListing, ConsoleMessages } from '../../src/client/consoleApi.ts';
import { type RunningConsole, serveConsole } from '../../src/client/consoleServer.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { Message } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/** Reads that must not wait on a dead worker: about a second, bounded generously for a loaded machine. */
const PROMPT_MS = 5_000;
/** The console's list is one visibility call, whatever its conversations' workers: the issue's 2 s. */
const LIST_MS = 2_000;
/** What the issue asks of the chat endpoint when a conversation's worker is gone. */
const CHAT_MS = 10_000;
/** The CLI's own start (tsx compiling the sources) comes on top. */
const CLI_MS = 20_000;

function yiem(
  args: string[],
  input = '',
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const began = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr, ms: Date.now() - began }),
    );
    child.stdin?.end(input);
  });
}

const shape = (messages: Message[]) =>
  messages.map((message) => ({ role: message.role, content: message.content }));

describe('reads of a conversation whose worker was SIGKILLed', () => {
  const address = inject('temporalAddress');
  const taskQueue = `workerless-${randomUUID()}`;
  let model: ScriptedModel;
  let bench: CrashBench;
  let worker: WorkerProcess;
  let client: AgentClient;
  let conversation: Conversation;
  let transcript: Message[];
  /** One whose model calls after the run's first and its `localStep` tool ran as local activities. */
  let local: Conversation;
  let localTranscript: Message[];
  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
    await bench.release();
    worker = await startWorkerProcess({ name: 'w1', bench, address, taskQueue, modelBaseURL: model.baseURL });
    client = new AgentClient({ address, taskQueue });
    conversation = await client.startConversation({ systemPrompt: 'You greet.' });
    model.enqueue({ kind: 'text', text: 'Hello there.' }, { kind: 'text', text: 'Still here.' });
    await conversation.send('hi');
    await conversation.send('are you there?');
    transcript = await conversation.messages();
    local = await client.startConversation({
      systemPrompt: 'You step.',
      modelPolicy: { localActivity: true },
    });
    model.enqueue(
      { kind: 'text', text: 'Ready.' },
      { kind: 'toolCalls', toolCalls: [{ id: 'l1', name: 'localStep', arguments: {} }] },
      { kind: 'text', text: 'Stepped.' },
    );
    await local.send('get ready');
    expect(await local.send('step once')).toMatchObject({ status: 'completed', reply: 'Stepped.' });
    localTranscript = await local.messages();
    await worker.kill();
  });
  afterAll(async () => {
    await conversation?.handle.terminate('test done').catch(() => {});
    await local?.handle.terminate('test done').catch(() => {});
    await client?.close();
    await model?.close();
    await bench?.remove();
  });

  it('answers the status from the server within seconds, naming the queue without a worker', async () => {
    const began = Date.now();
    const read = await conversation.statusOrRecord();
    expect(Date.now() - began).toBeLessThan(PROMPT_MS);
    expect(read).toMatchObject({
      record: {
        conversationId: conversation.id,
        executionStatus: 'RUNNING',
        status: 'idle',
        turns: 2,
        taskQueue,
      },
    });
    expect('record' in read && read.record.noWorker).toMatch(`no worker on task queue "${taskQueue}" since `);
  });

  it('answers the transcript from the history within seconds', async () => {
    const began = Date.now();
    const read = await conversation.messagesOrHistory();
    expect(Date.now() - began).toBeLessThan(PROMPT_MS);
    expect(read.noWorker).toContain(`no worker on task queue "${taskQueue}"`);
    expect(shape(read.messages)).toEqual(shape(transcript));
  });

  it('answers the transcript of local model and tool calls from their markers, the same as the worker gave', async () => {
    const read = await local.messagesOrHistory();
    expect(read.noWorker).toContain(`no worker on task queue "${taskQueue}"`);
    expect(shape(read.messages)).toEqual(shape(localTranscript));
    expect(read.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
  });

  it('the chat endpoint answers a message and a reconnect within seconds, saying no worker serves the queue', async () => {
    const served = await serveChatEndpoint({ client });
    try {
      const began = Date.now();
      const sent = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: conversation.id,
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'anyone?' }] }],
        }),
      });
      expect(Date.now() - began).toBeLessThan(CHAT_MS);
      expect(sent.status).toBe(503);
      expect(await sent.text()).toContain(
        `Conversation ${conversation.id} cannot answer now: no worker on task queue "${taskQueue}" since `,
      );

      const resumedAt = Date.now();
      const resumed = await fetch(`${served.url}/${conversation.id}/stream`);
      expect(Date.now() - resumedAt).toBeLessThan(CHAT_MS);
      expect(resumed.status).toBe(503);
      expect(await resumed.text()).toContain(`no worker on task queue "${taskQueue}"`);
    } finally {
      await served.close();
    }
    expect(shape((await conversation.messagesOrHistory()).messages)).toEqual(shape(transcript));
  });

  it('answers `yiem status` and `yiem history`, and `yiem chat` refuses at once, saying no worker serves the queue', async () => {
    const status = await yiem(['status', conversation.id, '--address', address]);
    expect(status.ms).toBeLessThan(CLI_MS);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`${conversation.id}  idle  2 turns`);
    expect(status.stdout).toContain(`no worker on task queue "${taskQueue}"`);

    const history = await yiem(['history', conversation.id, '--address', address]);
    expect(history.ms).toBeLessThan(CLI_MS);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain('Hello there.');
    expect(history.stdout).toContain('are you there?');
    expect(history.stderr).toContain(`no worker on task queue "${taskQueue}"`);

    const chat = await yiem(['chat', '--id', conversation.id, '--address', address], '/exit\n');
    expect(chat.ms).toBeLessThan(CLI_MS);
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain(
      `Conversation ${conversation.id} cannot chat now: no worker on task queue "${taskQueue}"`,
    );
  });
});

const transfer: AgentTool = {
  name: 'transfer',
  label: 'Transfer',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: () => textResult('sent'),
};

describe('the console while one agent has no worker', () => {
  let stopped: TestAgent;
  let live: TestAgent;
  let console_: RunningConsole;
  const waiting: string[] = [];
  beforeAll(async () => {
    stopped = await startTestAgent({ tools: [transfer] });
    live = await startTestAgent();
    for (let index = 0; index < 10; index++) {
      stopped.model.enqueue({
        kind: 'toolCalls',
        toolCalls: [{ id: `call_${index}`, name: 'transfer', arguments: { to: 'bo' } }],
      });
      const conversation = await stopped.client.startConversation({ systemPrompt: '' });
      await conversation.submit('pay bo');
      waiting.push(conversation.id);
    }
    for (let index = 0; index < 40; index++) await live.client.startConversation({ systemPrompt: '' });
    const awaiting = async () =>
      (await stopped.client.listConversations({ status: 'awaitingApproval', limit: 200 })).filter((row) =>
        waiting.includes(row.id),
      ).length;
    for (const deadline = Date.now() + 30_000; (await awaiting()) < 10; ) {
      if (Date.now() > deadline) throw new Error('the conversations never came to wait for approval');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stopped.stopWorker();
    console_ = await serveConsole({ client: live.client });
  });
  afterAll(async () => {
    await console_?.close();
    await live?.close();
    await stopped?.startWorker();
    await stopped?.close();
  });

  const get = async (path: string): Promise<{ ms: number; status: number; body: unknown }> => {
    const began = Date.now();
    const response = await fetch(`${console_.url}api/console/${path}`);
    const body = response.headers.get('content-type')?.includes('json')
      ? await response.json()
      : await response.text();
    return { ms: Date.now() - began, status: response.status, body };
  };

  it('lists every conversation within seconds, the workerless ones as waiting for approval', async () => {
    const list = await get('conversations');
    expect(list.status).toBe(200);
    expect(list.ms).toBeLessThan(LIST_MS);
    const rows = list.body as ConsoleListing[];
    expect(rows.length).toBeGreaterThanOrEqual(50);
    for (const id of waiting) {
      expect(rows.find((row) => row.id === id)).toMatchObject({
        status: 'awaitingApproval',
        awaitingApproval: { ownCalls: 1, subAgents: [] },
      });
    }
  });

  it("shows a workerless conversation's state and transcript from the server, saying no worker answers", async () => {
    const [id] = waiting;
    const detail = await get(`conversations/${id}`);
    expect(detail.ms).toBeLessThan(PROMPT_MS);
    expect(detail.body).toMatchObject({ id, executionStatus: 'RUNNING', status: null });
    expect((detail.body as ConsoleConversation).noWorker).toContain(
      `no worker on task queue "${stopped.taskQueue}"`,
    );
    expect((detail.body as ConsoleConversation).keptApprovals).toEqual([
      {
        approvalId: expect.stringMatching(/^tool-1-call_\d+$/),
        call: expect.stringContaining('transfer'),
        requestedAt: expect.any(Number),
      },
    ]);

    const messages = await get(`conversations/${id}/messages`);
    expect(messages.ms).toBeLessThan(PROMPT_MS);
    const body = messages.body as ConsoleMessages;
    expect(body.noWorker).toContain(`no worker on task queue "${stopped.taskQueue}"`);
    expect(JSON.stringify(body.messages)).toContain('pay bo');
  });

  it('answers the pending approvals from the history in the library and `yiem status`, saying no worker answers', async () => {
    const id = waiting[1] as string;
    const began = Date.now();
    const read = await stopped.client.getConversation(id).statusOrRecord();
    expect(Date.now() - began).toBeLessThan(PROMPT_MS);
    expect(read).toMatchObject({
      record: {
        status: 'awaitingApproval',
        pendingApprovals: [
          {
            approvalId: expect.stringMatching(/^tool-1-call_\d+$/),
            call: expect.stringContaining('transfer'),
          },
        ],
        noWorker: expect.stringContaining(`no worker on task queue "${stopped.taskQueue}"`),
      },
    });

    const status = await yiem(['status', id, '--address', inject('temporalAddress')]);
    expect(status.ms).toBeLessThan(CLI_MS);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/awaiting approval: transfer.* {3}\| {3}yiem approve \S+ tool-1-call_\d+/);
    expect(status.stdout).toContain(`no worker on task queue "${stopped.taskQueue}"`);
  });
});
