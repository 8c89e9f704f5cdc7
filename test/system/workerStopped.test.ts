import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { WorkerStoppedError } from '../../src/client/errors.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { type CrashBench, createCrashBench, startWorkerProcess } from '../support/workerProcess.ts';

describe('a send whose worker is SIGKILLed while it answers', () => {
  let model: ScriptedModel | undefined;
  let bench: CrashBench | undefined;
  let client: AgentClient | undefined;
  afterAll(async () => {
    await client?.close();
    await model?.close();
    await bench?.remove();
  });

  // The server lists a killed worker for minutes; it counts as stopped once its last poll is older
  // than a running worker's ever is (about a minute), hence the long timeout.
  it('fails naming the queue and the turn to collect, instead of waiting for good', {
    timeout: 180_000,
  }, async () => {
    const address = inject('temporalAddress');
    const taskQueue = `stopped-${randomUUID()}`;
    model = await startScriptedModel();
    bench = await createCrashBench();
    const worker = await startWorkerProcess({
      name: 'w1',
      bench,
      address,
      taskQueue,
      modelBaseURL: model.baseURL,
    });
    client = new AgentClient({ address, taskQueue });
    model.enqueue({ kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] });
    const conversation = await client.startConversation({ systemPrompt: '' });
    const sent = conversation.send('take a step', { key: 'the-step' }).catch((error: unknown) => error);
    while ((await bench.markers()).length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    await worker.kill();

    const error = await sent;
    expect(error).toBeInstanceOf(WorkerStoppedError);
    expect((error as WorkerStoppedError).message).toContain(`No worker on task queue "${taskQueue}" since `);
    expect((error as WorkerStoppedError).message).toContain(`yiem turns collect ${conversation.id} the-step`);
    expect(error).toMatchObject({ conversationId: conversation.id, taskQueue, turnId: 'the-step' });
    await conversation.handle.terminate('test done');
  });
});
