import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import type { Message } from '../../src/contract/types.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/** Reads that must not wait on a dead worker: about a second, bounded generously for a loaded machine. */
const PROMPT_MS = 5_000;
/** The CLI's own start (tsx compiling the sources) comes on top. */
const CLI_MS = 20_000;

function yiem(args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const began = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr, ms: Date.now() - began }),
    );
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
  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
    worker = await startWorkerProcess({ name: 'w1', bench, address, taskQueue, modelBaseURL: model.baseURL });
    client = new AgentClient({ address, taskQueue });
    conversation = await client.startConversation({ systemPrompt: 'You greet.' });
    model.enqueue({ kind: 'text', text: 'Hello there.' }, { kind: 'text', text: 'Still here.' });
    await conversation.send('hi');
    await conversation.send('are you there?');
    transcript = await conversation.messages();
    await worker.kill();
  });
  afterAll(async () => {
    await conversation?.handle.terminate('test done').catch(() => {});
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

  it('answers `yiem status` and `yiem history`, saying no worker serves the queue', async () => {
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
  });
});
