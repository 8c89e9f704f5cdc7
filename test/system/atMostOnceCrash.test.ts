import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  useCrashScene,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/**
 * At-most-once tools (test/support/markerWorker.ts: `pay` with a reconcile, `payBlind` without)
 * whose worker process is SIGKILLed after the payment took effect and before the tool returned.
 * The ledger is the payment service: one file per payment.
 */
describe('an at-most-once tool whose worker is killed', () => {
  const scene = useCrashScene('at-most-once');
  const { startWorker } = scene;
  const startConversation = (id: string) => scene.startConversation(id, { systemPrompt: 'Pay once.' });
  const ledger = async (): Promise<{ amount: number; by: string }[]> => {
    const dir = path.join(scene.bench.markerDir, 'ledger');
    const files = (await readdir(dir)).filter((file) => file.endsWith('.json'));
    return Promise.all(files.map(async (file) => JSON.parse(await readFile(path.join(dir, file), 'utf8'))));
  };
  const toolResult = async (conversation: Conversation): Promise<ToolResultMessage> => {
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    return messages[2] as ToolResultMessage;
  };
  const toolEnds = async (conversation: Conversation): Promise<ConversationEventItem[]> => {
    const ends: ConversationEventItem[] = [];
    for await (const event of conversation.events()) {
      if (event.type === 'toolEnd') ends.push(event);
      if (event.type === 'turnEnd') return ends;
    }
    return ends;
  };

  /** The model asks for one payment; the first worker dies in it; a second worker takes over. */
  const killMidPayment = async (tool: string) => {
    const conversation = await startConversation(`kill-${tool}`);
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name: tool, arguments: { amount: 5 } }] },
      { kind: 'text', text: 'Payment handled.' },
    );
    const first = await startWorker('first');
    const reply = conversation.send('pay 5');
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toEqual(['call_pay.1.first.json']);
    const killed = Date.now();
    await first.kill();
    await scene.bench.release();
    await startWorker('second');
    const restarted = Date.now();
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Payment handled.' });
    const ended = Date.now();
    console.log(
      `recovery, ${tool}: turn ended ${ended - killed} ms after the kill, ${ended - restarted} ms after the second worker was ready`,
    );
    // The payment ran on the first attempt only, and took effect once.
    expect(await scene.bench.markers()).toEqual(['call_pay.1.first.json']);
    expect(await ledger()).toEqual([{ amount: 5, by: 'first' }]);
    expect(scene.model.requestCount).toBe(2);
    return conversation;
  };

  it('asks reconcile, which finds the payment done: the model reads its result', async () => {
    const conversation = await killMidPayment('pay');
    const result = await toolResult(conversation);
    expect(result).toMatchObject({ isError: false });
    expect(result.content[0]?.text).toBe('paid 5 by first (found by reconcile on second)');
    expect((await toolEnds(conversation)).at(-1)).toMatchObject({ attempt: 2, outcome: 'reconciled' });
  });

  it('without reconcile, tells the model the outcome is unknown', async () => {
    const conversation = await killMidPayment('payBlind');
    const result = await toolResult(conversation);
    expect(result).toMatchObject({ isError: true, details: { outcome: 'unknown' } });
    expect(result.content[0]?.text).toContain('outcome unknown: the call may or may not have taken effect');
    expect(scene.model.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: result.content[0]?.text,
    });
    expect((await toolEnds(conversation)).at(-1)).toMatchObject({
      attempt: 2,
      outcome: 'unknown',
      isError: true,
    });
  });

  it('never repeats a completed payment when the worker dies in the model call after it', async () => {
    const conversation = await startConversation('kill-after-payment');
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name: 'payBlind', arguments: { amount: 7 } }] },
      { kind: 'text', text: 'never delivered', delayMs: 60_000 },
      { kind: 'text', text: 'Paid, and answered after the crash.' },
    );
    const first = await startWorker('first');
    await scene.bench.release();
    const reply = conversation.send('pay 7');
    await expect.poll(() => scene.model.requestCount, { timeout: 30_000 }).toBe(2);
    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Paid, and answered after the crash.' });
    expect(await scene.bench.markers()).toEqual(['call_pay.1.first.json']);
    expect(await ledger()).toEqual([{ amount: 7, by: 'first' }]);
    const result = await toolResult(conversation);
    expect(result).toMatchObject({ isError: false, content: [{ text: 'paid 7 by first' }] });
  });
});

/** A Temporal server of its own (the shared one must survive), SIGKILLed while `pay` runs. */
describe('an at-most-once tool running while the Temporal server is killed', () => {
  let dataDir: string;
  let server: DevServer;
  let model: ScriptedModel;
  let bench: CrashBench;
  let worker: WorkerProcess | undefined;
  let client: AgentClient | undefined;

  const startServer = async (port: number): Promise<DevServer> =>
    startDevServer({ dataDir, cliPath: await ensureTemporalCli(), port, headless: true });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-at-most-once-server-'));
    server = await startServer(0);
    model = await startScriptedModel();
    bench = await createCrashBench();
  });
  afterAll(async () => {
    await worker?.kill();
    await client?.close();
    await model?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
    await bench?.remove();
  });

  it('pays once: the attempt finishes after the restart, or reconcile finds it done', async () => {
    const taskQueue = `at-most-once-server-${randomUUID()}`;
    const address = server.address;
    const port = Number(address.split(':').at(-1));
    worker = await startWorkerProcess({ name: 'w', bench, address, taskQueue, modelBaseURL: model.baseURL });
    client = new AgentClient({ address, taskQueue });
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pay', name: 'pay', arguments: { amount: 9 } }] },
      { kind: 'text', text: 'Paid despite the outage.' },
    );
    const conversation = await client.startConversation({ systemPrompt: 'Pay once.' });
    await conversation.post('pay 9');
    await expect.poll(bench.markers, { timeout: 30_000 }).toEqual(['call_pay.1.w.json']);

    server.kill();
    await server.stop();
    server = await startServer(port);
    await bench.release();

    await expect
      .poll(async () => (await conversation.status()).lastTurn, { timeout: 45_000, interval: 250 })
      .toMatchObject({ turn: 1, status: 'completed', reply: 'Paid despite the outage.' });
    expect(await bench.markers()).toEqual(['call_pay.1.w.json']);
    const ledgerDir = path.join(bench.markerDir, 'ledger');
    expect((await readdir(ledgerDir)).filter((file) => file.endsWith('.json'))).toHaveLength(1);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    // Which one depends on whether the restarted server counted the attempt's heartbeats as missed.
    expect(result.content[0]?.text).toMatch(/^paid 9 by w( \(found by reconcile on w\))?$/);
    console.log(`server restart: the model read "${result.content[0]?.text}"`);
  });
});
