import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/** Over the 32 KB threshold: the prompt travels through the payload store. */
const bigPrompt = `BIG-PROMPT ${'b'.repeat(40_000)}`;

/**
 * A worker process started in one folder and a client in another, as when `yiem worker` runs in
 * one project and a script in another: the payload store must not depend on either folder.
 */
describe('the payload store of a worker and a client in two working directories', () => {
  const address = inject('temporalAddress');
  let model: ScriptedModel;
  let bench: CrashBench;
  let scratch: string;
  const workers: WorkerProcess[] = [];
  const clients: AgentClient[] = [];

  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'yiem-store-'));
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    for (const client of clients.splice(0)) await client.close();
    model.reset();
  });
  afterAll(async () => {
    await model?.close();
    await bench?.remove();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** A worker in its own folder under `scratch`, with `env` for its store settings. */
  const startWorker = async (taskQueue: string, env: Record<string, string>): Promise<void> => {
    const cwd = await mkdtemp(path.join(scratch, 'worker-cwd-'));
    const name = `worker-${workers.length}`;
    workers.push(
      await startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model.baseURL, cwd, env }),
    );
  };
  const newClient = (taskQueue: string, env: Record<string, string>): AgentClient => {
    const client = new AgentClient({ address, taskQueue, env });
    clients.push(client);
    return client;
  };

  it('share the per-user store by default, and a prompt over 32 KB is answered', async () => {
    const taskQueue = `store-default-${randomUUID()}`;
    const user = { XDG_DATA_HOME: path.join(scratch, 'xdg') };
    await startWorker(taskQueue, { ...user, YIEM_PAYLOADS_DIR: '', YIEM_DATA_DIR: '' });
    model.enqueue({ kind: 'text', text: 'Read it all.' });
    const conversation = await newClient(taskQueue, user).startConversation({ systemPrompt: 'Reader.' });
    expect(await conversation.send(bigPrompt)).toMatchObject({ status: 'completed', reply: 'Read it all.' });
    const [first] = await conversation.messages();
    expect(first?.role).toBe('user');
    expect(first?.content === bigPrompt, 'the prompt comes back whole').toBe(true);
  });

  it('with two different stores, refuse the big prompt naming both, and keep answering', async () => {
    const taskQueue = `store-split-${randomUUID()}`;
    const workerStore = path.join(scratch, 'worker-store');
    const clientStore = path.join(scratch, 'client-store');
    await startWorker(taskQueue, { YIEM_PAYLOADS_DIR: workerStore });
    const conversation = await newClient(taskQueue, { YIEM_PAYLOADS_DIR: clientStore }).startConversation({
      systemPrompt: 'Reader.',
    });

    const refused = conversation.send(bigPrompt);
    // A worker announces its store by the first digits of its id (its identity is in every history event).
    const workerStoreId = (await readFile(path.join(workerStore, 'store-id'), 'utf8')).trim().slice(0, 8);
    await expect(refused).rejects.toThrow(`uses the payload store with id ${workerStoreId}`);
    await expect(refused).rejects.toThrow(clientStore);
    await expect(refused).rejects.toThrow(/YIEM_PAYLOADS_DIR/);

    // A reply over 4 KB: the worker keeps it in its store, where this client cannot read it.
    const longReply = `Small one answered. ${'r'.repeat(10_000)}`;
    model.enqueue({ kind: 'text', text: longReply });
    expect((await conversation.send('A small prompt.')).reply === longReply).toBe(true);
    await expect(conversation.messages()).rejects.toThrow(
      /Message 1 of conversation \S+ \(\d+ bytes, in the payload store\) cannot be read by this client: .*yiem doctor/,
    );

    // Fixed: a client on the worker's store sends the big prompt to the same conversation.
    const fixed = newClient(taskQueue, { YIEM_PAYLOADS_DIR: workerStore }).getConversation(conversation.id);
    model.enqueue({ kind: 'text', text: 'Big one answered.' });
    expect(await fixed.send(bigPrompt)).toMatchObject({ reply: 'Big one answered.' });
    const transcript = await fixed.messages();
    expect(transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(transcript[2]?.content === bigPrompt, 'the big prompt comes back whole').toBe(true);
  });
});
