import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type CrashBench, createCrashBench, startWorkerProcess } from '../support/workerProcess.ts';

describe('a worker restarted with another model on the same task queue', () => {
  let mistyped: ScriptedModel | undefined;
  let bench: CrashBench | undefined;
  let fixed: TestAgent | undefined;
  afterAll(async () => {
    await fixed?.close();
    await mistyped?.close();
    await bench?.remove();
  });

  // The killed worker stays listed as a poller: the fixed one waits until it shows it has stopped
  // (at most a long poll, about a minute), then serves. Hence the long timeout.
  it('serves its first model call without refusing it for the killed worker', {
    timeout: 180_000,
  }, async () => {
    const address = inject('temporalAddress');
    const taskQueue = `restarted-${randomUUID()}`;
    mistyped = await startScriptedModel();
    bench = await createCrashBench();
    const first = await startWorkerProcess({
      name: 'mistyped',
      bench,
      address,
      taskQueue,
      modelBaseURL: mistyped.baseURL,
    });
    await first.kill();

    fixed = await startTestAgent({ worker: { taskQueue } });
    fixed.model.enqueue({ kind: 'text', text: 'The fixed model answers.' });
    const conversation = await fixed.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('hello?');
    expect(result).toMatchObject({ status: 'completed', reply: 'The fixed model answers.' });
    expect(result.error).toBeUndefined();
    expect(mistyped.requestCount).toBe(0);
    await conversation.end();
  });
});
