import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/**
 * A Temporal server of its own (the shared one must survive), killed with SIGKILL mid-conversation
 * and started again on the same SQLite file and port.
 */
describe('a Temporal server killed mid-conversation', () => {
  let dataDir: string;
  let server: DevServer;
  let model: ScriptedModel;
  let bench: CrashBench;
  let worker: WorkerProcess | undefined;
  let client: AgentClient | undefined;

  const startServer = async (port: number): Promise<DevServer> =>
    startDevServer({ dataDir, cliPath: await ensureTemporalCli(), port, headless: true });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-server-crash-'));
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

  it('completes the conversation after a restart on the same database, transcript intact', async () => {
    const taskQueue = `server-crash-${randomUUID()}`;
    const address = server.address;
    const port = Number(address.split(':').at(-1));
    worker = await startWorkerProcess({ name: 'w', bench, address, taskQueue, modelBaseURL: model.baseURL });
    client = new AgentClient({ address, taskQueue });
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'Done despite the outage.' },
    );
    const conversation = await client.startConversation({ systemPrompt: 'Outlive the server.' });
    await conversation.post('first message');
    await expect.poll(bench.markers, { timeout: 30_000 }).toHaveLength(1);

    server.kill();
    await server.stop();
    server = await startServer(port);
    await bench.release();

    await expect
      .poll(async () => (await conversation.status()).lastTurn, { timeout: 45_000, interval: 250 })
      .toMatchObject({ turn: 1, status: 'completed', reply: 'Done despite the outage.' });
    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(messages[0]).toMatchObject({ content: 'first message' });
    expect((messages[2] as ToolResultMessage).content[0]?.text).toMatch(/^step call_step done by w/);
    expect(model.requestCount).toBe(2);

    // The conversation goes on as usual after the outage.
    model.enqueue({ kind: 'text', text: 'Still here.' });
    expect(await conversation.send('second message')).toMatchObject({ turn: 2, status: 'completed' });
  });
});
