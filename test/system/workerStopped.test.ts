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

  it('collect fails within seconds once the worker is SIGKILLed, and the turn is collected from a new worker', {
    timeout: 120_000,
  }, async () => {
    const address = inject('temporalAddress');
    const taskQueue = `collect-stopped-${randomUUID()}`;
    model ??= await startScriptedModel();
    model.reset();
    const bench = await createCrashBench();
    const start = (name: string) =>
      startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model?.baseURL ?? '' });
    const first = await start('w1');
    const collector = new AgentClient({ address, taskQueue });
    try {
      model.enqueue(
        { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] },
        { kind: 'text', text: 'Stepped.' },
      );
      const conversation = await collector.startConversation({ systemPrompt: '' });
      const { turnId } = await conversation.sendDetached('take a step');
      while ((await bench.markers()).length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      await first.kill();

      const began = Date.now();
      const error = await conversation.collect(turnId).catch((thrown: unknown) => thrown);
      // Two unanswered looks (1 s, then 10 s) and the record read; bounded generously for a loaded machine.
      expect(Date.now() - began).toBeLessThan(30_000);
      expect(error).toBeInstanceOf(WorkerStoppedError);
      expect(error).toMatchObject({ conversationId: conversation.id, taskQueue, turnId });
      expect((error as Error).message).toContain(`No worker on task queue "${taskQueue}"`);

      const second = await start('w2');
      await bench.release();
      expect(await conversation.collect(turnId)).toMatchObject({ status: 'completed', reply: 'Stepped.' });
      await conversation.handle.terminate('test done');
      await second.kill();
    } finally {
      await collector.close();
      await bench.remove();
    }
  });
});
