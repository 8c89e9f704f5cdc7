import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

const codecKeys = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

/** `yiem doctor` in its own process and folder; resolves with its exit code and what it printed. */
async function doctor(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const { YIEM_CODEC_KEYS: _keys, YIEM_CODEC_KEY_FILE: _file, ...base } = process.env;
  const child = spawn(process.execPath, [...YIEM_FROM_SOURCES, 'doctor'], {
    cwd: os.tmpdir(),
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  return { code: code as number, output };
}

describe('yiem doctor', () => {
  const address = inject('temporalAddress');
  const taskQueue = `doctor-${randomUUID()}`;
  const key = codecKeys('k1');
  let model: ScriptedModel;
  let bench: CrashBench;
  let scratch: string;
  let workerStore: string;
  let worker: WorkerProcess;

  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'yiem-doctor-'));
    workerStore = path.join(scratch, 'worker-store');
    worker = await startWorkerProcess({
      name: 'doctor-worker',
      bench,
      address,
      taskQueue,
      modelBaseURL: model.baseURL,
      cwd: scratch,
      env: { YIEM_PAYLOADS_DIR: workerStore, YIEM_CODEC_KEYS: key },
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await model?.close();
    await bench?.remove();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const onQueue = { TEMPORAL_ADDRESS: address, YIEM_TASK_QUEUE: taskQueue };

  it('passes when the server answers and the workers share the store and the keys', async () => {
    const { code, output } = await doctor({
      ...onQueue,
      YIEM_PAYLOADS_DIR: workerStore,
      YIEM_CODEC_KEYS: key,
    });
    expect(output).not.toContain('FAIL');
    expect(output).toMatch(/ok {3}server: /);
    expect(output).toContain(`1 on task queue "${taskQueue}"`);
    expect(output).toMatch(/ok {3}payload store: workers and this client use the same store/);
    expect(output).toMatch(/ok {3}codec keys: workers and this client agree \(k1:[0-9a-f]{8}\)/);
    expect(output).not.toContain(key.split(':')[1]);
    expect(code).toBe(0);
  });

  it('checks the model endpoint with one request, and lists the task queues that have yiem workers', async () => {
    // Temporal lists no task queues: the ones named are those of conversations (and the default).
    const client = new AgentClient({ address, taskQueue });
    try {
      await (await client.startConversation({ systemPrompt: '' })).handle.terminate('listed');
    } finally {
      await client.close();
    }
    const answering = await doctor({ ...onQueue, OPENAI_BASE_URL: model.baseURL, YIEM_MODEL: 'scripted' });
    expect(answering.output).toContain(
      `ok   model: model scripted at ${model.baseURL} answers (HTTP 200 for GET /models)`,
    );
    expect(answering.output).toMatch(
      new RegExp(`ok {3}queues: task queues with yiem workers: .*"${taskQueue}"`),
    );

    const silent = await doctor({ ...onQueue, OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(silent.output).toContain('FAIL model: nothing answers at http://127.0.0.1:1/v1 (');
    expect(silent.output).toContain('set OPENAI_BASE_URL (and OPENAI_API_KEY, YIEM_MODEL)');
    expect(silent.code).toBe(1);
  });

  it('names a server that does not answer', async () => {
    const { code, output } = await doctor({ TEMPORAL_ADDRESS: '127.0.0.1:1', YIEM_TASK_QUEUE: taskQueue });
    expect(output).toMatch(/FAIL server: no Temporal server answers at 127\.0\.0\.1:1/);
    expect(code).toBe(1);
  });

  it('names a task queue no worker polls', async () => {
    const { code, output } = await doctor({
      TEMPORAL_ADDRESS: address,
      YIEM_TASK_QUEUE: `empty-${randomUUID()}`,
    });
    expect(output).toMatch(/FAIL workers: no worker polls task queue "empty-/);
    expect(output).toContain('task queues with yiem workers:');
    expect(code).toBe(1);
  });

  it('names both stores when the client uses another one', async () => {
    const clientStore = path.join(scratch, 'client-store');
    const { code, output } = await doctor({
      ...onQueue,
      YIEM_PAYLOADS_DIR: clientStore,
      YIEM_CODEC_KEYS: key,
    });
    expect(output).toMatch(/FAIL payload store: /);
    const workerStoreId = (await readFile(path.join(workerStore, 'store-id'), 'utf8')).trim().slice(0, 8);
    expect(output).toContain(`uses the payload store with id ${workerStoreId}`);
    expect(output).toContain(clientStore);
    expect(output).toMatch(/ok {3}codec keys/);
    expect(code).toBe(1);
  });

  it('names the keys by id and fingerprint when they differ, never showing one', async () => {
    const other = codecKeys('k2');
    const { code, output } = await doctor({
      ...onQueue,
      YIEM_PAYLOADS_DIR: workerStore,
      YIEM_CODEC_KEYS: other,
    });
    expect(output).toMatch(
      /FAIL codec keys: Worker .* has codec keys k1:[0-9a-f]{8}, this client k2:[0-9a-f]{8}/,
    );
    expect(output).not.toContain(key.split(':')[1]);
    expect(output).not.toContain(other.split(':')[1]);
    expect(code).toBe(1);
  });
});
