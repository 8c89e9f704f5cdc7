import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import type { ConsoleConversation, ConsoleListing } from '../../src/client/consoleApi.ts';
import { type RunningConsole, serveConsole } from '../../src/client/consoleServer.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { runYiem } from '../support/cli.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/** The bound for a read of a conversation whose worker was SIGKILLed: one second's try, then the server's record. */
const READ_MS = 2_000;

/**
 * A conversation waits for a person's approval when its worker is SIGKILLed: the approval it waits
 * for is shown from what the server keeps, at once, by the library, the console and the CLI.
 */
describe('a conversation waiting for an approval when its worker is SIGKILLed', () => {
  const address = inject('temporalAddress');
  const taskQueue = `approval-killed-${randomUUID()}`;
  let model: ScriptedModel;
  let bench: CrashBench;
  let worker: WorkerProcess;
  let client: AgentClient;
  let conversation: Conversation;
  let console_: RunningConsole;
  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
    worker = await startWorkerProcess({ name: 'w1', bench, address, taskQueue, modelBaseURL: model.baseURL });
    client = new AgentClient({ address, taskQueue });
    model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ id: 'call_pay_bo', name: 'transfer', arguments: { to: 'bo' } }],
    });
    conversation = await client.startConversation({ systemPrompt: '' });
    await conversation.submit('pay bo');
    for (
      const deadline = Date.now() + 30_000;
      (await conversation.status()).pendingApprovals.length === 0;
    ) {
      if (Date.now() > deadline) throw new Error('the conversation never came to wait for the approval');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await worker.kill();
    console_ = await serveConsole({ client });
  }, 90_000);
  afterAll(async () => {
    await console_?.close();
    await worker?.kill();
    await conversation?.handle.terminate('test done').catch(() => {});
    await client?.close();
    await model?.close();
    await bench?.remove();
  });

  it('the library answers the status with the pending approval, and the transcript, within 2 s', async () => {
    let began = Date.now();
    const read = await conversation.statusOrRecord();
    expect(Date.now() - began).toBeLessThan(READ_MS);
    expect(read).toMatchObject({
      record: {
        status: 'awaitingApproval',
        pendingApprovals: [{ approvalId: 'tool-1-call_pay_bo', call: expect.stringContaining('transfer') }],
        noWorker: expect.stringContaining(`no worker on task queue "${taskQueue}"`),
      },
    });

    began = Date.now();
    const history = await conversation.messagesOrHistory();
    expect(Date.now() - began).toBeLessThan(READ_MS);
    expect(history.noWorker).toContain(`no worker on task queue "${taskQueue}"`);
    expect(JSON.stringify(history.messages)).toContain('pay bo');
  });

  it("the console's list and detail show it waiting for the approval within 2 s", async () => {
    const get = async (path: string) => {
      const began = Date.now();
      const response = await fetch(`${console_.url}api/console/${path}`);
      return { ms: Date.now() - began, status: response.status, body: await response.json() };
    };
    const list = await get('conversations');
    expect(list.ms).toBeLessThan(READ_MS);
    expect((list.body as ConsoleListing[]).find((row) => row.id === conversation.id)).toMatchObject({
      status: 'awaitingApproval',
      awaitingApproval: { ownCalls: 1, subAgents: [] },
    });

    const detail = await get(`conversations/${conversation.id}`);
    expect(detail.ms).toBeLessThan(READ_MS);
    const body = detail.body as ConsoleConversation;
    expect(body.noWorker).toContain(`no worker on task queue "${taskQueue}"`);
    expect(body.keptApprovals).toEqual([
      {
        approvalId: 'tool-1-call_pay_bo',
        call: expect.stringContaining('transfer'),
        requestedAt: expect.any(Number),
      },
    ]);
  });

  it('`yiem status` and `yiem history` show it and say that no worker answers', async () => {
    const status = await runYiem(['status', conversation.id], address);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /awaiting approval: transfer.* {3}\| {3}yiem approve \S+ tool-1-call_pay_bo/,
    );
    expect(status.stdout).toContain(`no worker on task queue "${taskQueue}"`);

    const history = await runYiem(['history', conversation.id], address);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain('pay bo');
    expect(history.stderr).toContain(`no worker on task queue "${taskQueue}"`);
  });
});
