import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import type { ToolCallInfo, ToolResultMessage } from '../../src/contract/types.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/**
 * Workers are separate processes killed with SIGKILL: no shutdown code runs, exactly as when a
 * machine dies. The model server stays in this process and counts every request.
 */
describe('a worker killed mid-conversation', () => {
  const address = inject('temporalAddress');
  let model: ScriptedModel;
  let client: AgentClient;
  let bench: CrashBench;
  let taskQueue: string;
  const workers: WorkerProcess[] = [];

  const startWorker = async (name: string): Promise<WorkerProcess> => {
    const worker = await startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model.baseURL });
    workers.push(worker);
    return worker;
  };
  const markerCall = async (marker: string): Promise<ToolCallInfo> =>
    JSON.parse(await readFile(path.join(bench.markerDir, marker), 'utf8'));

  beforeAll(async () => {
    model = await startScriptedModel();
    client = new AgentClient({ address });
  });
  afterAll(async () => {
    await client?.close();
    await model?.close();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    await bench?.remove();
    model.reset();
  });

  const startConversation = async (id: string) => {
    taskQueue = `crash-${randomUUID()}`;
    bench = await createCrashBench();
    const scoped = new AgentClient({ client: client.client, taskQueue });
    return scoped.startConversation({
      id: `${id}-${randomUUID()}`,
      systemPrompt: 'Survive.',
      // A model call whose worker died is noticed by its missing heartbeats, long before the
      // start-to-close timeout (longer than the test's own time limit).
      modelPolicy: {
        startToCloseTimeout: '2 minutes',
        heartbeatTimeout: '2 seconds',
        retry: { initialInterval: '100 milliseconds' },
      },
    });
  };

  it('runs the tool again as attempt 2 with the same call id and repeats no completed model call', async () => {
    const conversation = await startConversation('crash-mid-tool');
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'All steps done.' },
    );
    const first = await startWorker('first');
    const reply = conversation.send('do the step');
    await expect.poll(bench.markers, { timeout: 30_000 }).toEqual(['call_step.1.first.json']);

    await first.kill();
    await bench.release();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'All steps done.' });
    expect(await bench.markers()).toEqual(['call_step.1.first.json', 'call_step.2.second.json']);
    const [attempt1, attempt2] = await Promise.all([
      markerCall('call_step.1.first.json'),
      markerCall('call_step.2.second.json'),
    ]);
    expect(attempt1).toMatchObject({ toolCallId: 'call_step', attempt: 1 });
    expect(attempt2).toMatchObject({ toolCallId: 'call_step', attempt: 2 });
    expect(attempt2.idempotencyKey).toBe(attempt1.idempotencyKey);
    // One request that asked for the tool, one after it: the first model call was not made again.
    expect(model.requestCount).toBe(2);

    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    const result = messages[2] as ToolResultMessage;
    expect(result).toMatchObject({ toolCallId: 'call_step', isError: false });
    expect(result.content[0]?.text).toBe('step call_step done by second on attempt 2');
    await replayAndRecord(conversation.handle, 'worker-crash-mid-tool');
  });

  it('retries a model call whose worker died, with the same context, and keeps the tool result', async () => {
    const conversation = await startConversation('crash-mid-model');
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_before', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'never delivered', delayMs: 60_000 },
      { kind: 'text', text: 'Answered after the crash.' },
    );
    const first = await startWorker('first');
    await bench.release();
    const reply = conversation.send('step, then answer');
    await expect.poll(() => model.requestCount, { timeout: 30_000 }).toBe(2);

    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Answered after the crash.' });
    expect(model.requestCount).toBe(3);
    // The retried call sent exactly what the lost one had sent.
    expect(model.requests[2]?.body.messages).toEqual(model.requests[1]?.body.messages);
    // The tool finished before the crash and did not run again.
    expect(await bench.markers()).toEqual(['call_before.1.first.json']);
    const roles = (await conversation.messages()).map((message) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('lets the surviving one of two workers on the task queue finish the work', async () => {
    const conversation = await startConversation('two-workers');
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_shared', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'Finished by the survivor.' },
    );
    await Promise.all([startWorker('alpha'), startWorker('beta')]);
    const reply = conversation.send('work');
    await expect.poll(bench.markers, { timeout: 30_000 }).toHaveLength(1);
    const [marker] = await bench.markers();
    const busy = workers.find((worker) => marker?.endsWith(`.${worker.name}.json`));
    const survivor = workers.find((worker) => worker !== busy);
    if (!busy || !survivor) throw new Error(`no worker owns marker ${marker}`);

    await busy.kill();
    await bench.release();

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Finished by the survivor.' });
    expect(await bench.markers()).toEqual([marker, `call_shared.2.${survivor.name}.json`]);
    expect(model.requestCount).toBe(2);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result.content[0]?.text).toBe(`step call_shared done by ${survivor.name} on attempt 2`);
  });
});
