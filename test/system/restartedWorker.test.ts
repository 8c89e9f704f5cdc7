import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  POLLER_GONE_MS,
  recentPollerTimes,
  TASK_QUEUE_TYPE_ACTIVITY,
} from '../../src/infrastructure/taskQueuePollers.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  untilHeartbeatsKnown,
  type WorkerProcess,
} from '../support/workerProcess.ts';

/**
 * A worker with a mistyped model is stopped and a fixed one started on its queue. The server lists
 * the stopped one as a poller for minutes; the fixed one must not take it for a running worker of
 * another model. It is told stopped by Temporal's worker heartbeats: at once after a graceful
 * shutdown, after a few missed heartbeats (seconds) after a SIGKILL; both long before its last
 * poll ages past the 70 s a poller counts without heartbeats.
 */
describe('a worker restarted with another model on the same task queue', () => {
  const address = inject('temporalAddress');
  let connection: Connection | undefined;
  let mistyped: ScriptedModel | undefined;
  let bench: CrashBench | undefined;
  let fixed: TestAgent | undefined;
  beforeAll(async () => {
    connection = await Connection.connect({ address });
    mistyped = await startScriptedModel();
    bench = await createCrashBench();
  });
  afterEach(async () => {
    await fixed?.close();
    fixed = undefined;
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await connection?.close();
    await mistyped?.close();
    await bench?.remove();
  });

  /** The mistyped worker on a fresh queue, once the server has two of its heartbeats (it knows their interval). */
  async function startMistyped(): Promise<{ worker: WorkerProcess; taskQueue: string }> {
    if (!bench || !mistyped || !connection) throw new Error('set up first');
    const taskQueue = `restarted-${randomUUID()}`;
    const worker = await startWorkerProcess({
      name: 'mistyped',
      bench,
      address,
      taskQueue,
      modelBaseURL: mistyped.baseURL,
    });
    await untilHeartbeatsKnown(address, taskQueue);
    return { worker, taskQueue };
  }

  /** When the stopped worker last began a poll, as the server still lists it. */
  async function stoppedWorkersPoll(taskQueue: string): Promise<number> {
    if (!connection) throw new Error('set up first');
    const pollers = await recentPollerTimes(
      connection.workflowService,
      'default',
      taskQueue,
      TASK_QUEUE_TYPE_ACTIVITY,
    );
    const stopped = pollers.find(({ identity }) => identity.includes(' yiem(m'));
    if (!stopped) throw new Error(`the server no longer lists the stopped worker of ${taskQueue}`);
    return stopped.lastPollMs;
  }

  async function answersWithFixedModel(taskQueue: string): Promise<void> {
    fixed = await startTestAgent({ worker: { connection: { taskQueue } } });
    fixed.model.enqueue({ kind: 'text', text: 'The fixed model answers.' });
    const conversation = await fixed.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('hello?');
    expect(result).toMatchObject({ status: 'completed', reply: 'The fixed model answers.' });
    expect(result.error).toBeUndefined();
    await conversation.end();
  }

  it('after a graceful stop, serves its first model call at once and says nothing of the stopped worker', {
    timeout: 120_000,
  }, async () => {
    const { worker, taskQueue } = await startMistyped();
    const lastPoll = await stoppedWorkersPoll(taskQueue);
    await worker.stop();
    const warned = vi.spyOn(console, 'warn');

    await answersWithFixedModel(taskQueue);
    // Answered while the stopped worker's poller would still count by its last poll alone.
    expect(Date.now() - lastPoll).toBeLessThan(POLLER_GONE_MS);
    expect(warned.mock.calls.flat().join('\n')).not.toContain('another worker serving');
    expect(mistyped?.requestCount).toBe(0);
  });

  it('after a SIGKILL, serves its first model call once the killed worker missed its heartbeats', {
    timeout: 120_000,
  }, async () => {
    const { worker, taskQueue } = await startMistyped();
    const lastPoll = await stoppedWorkersPoll(taskQueue);
    await worker.kill();

    await answersWithFixedModel(taskQueue);
    expect(Date.now() - lastPoll).toBeLessThan(POLLER_GONE_MS);
    expect(mistyped?.requestCount).toBe(0);
  });
});
