import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import type { approvalRaceWorkflow } from '../support/workflows/approvalRace.ts';

const POLL = { timeout: 15_000, interval: 100 };

/**
 * A person's decision and the approval's timeout in one workflow task. The conversation workflow
 * gets Updates ahead of timers from today's SDK core, so approval.test.ts checks the outcome there;
 * this workflow applies the decision from a timer job, so both orders of the two are exercised.
 */
describe('a decision and an approval timeout in the same workflow task', () => {
  let connection: NativeConnection;
  let client: Client;
  let bundle: { code: string };
  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
    bundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../support/workflows/approvalRace.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
    });
  });
  afterAll(async () => {
    await client?.connection.close();
    await connection?.close();
  });

  it('settles the call once: what the person is told is what the tool call gets', async () => {
    const taskQueue = `race-${randomUUID()}`;
    const startWorker = async () => {
      const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle });
      return { worker, running: worker.run() };
    };
    let current = await startWorker();
    const handle = await client.workflow.start<typeof approvalRaceWorkflow>('approvalRaceWorkflow', {
      taskQueue,
      workflowId: taskQueue,
    });
    const count = async (has: (event: Record<string, unknown>) => boolean) =>
      ((await handle.fetchHistory()).events ?? []).filter((event) => has(event as never)).length;
    await expect.poll(() => count((event) => Boolean(event.timerStartedEventAttributes)), POLL).toBe(2);
    // Without a worker both timers fire before the next workflow task: it gets both.
    current.worker.shutdown();
    await current.running;
    await expect.poll(() => count((event) => Boolean(event.timerFiredEventAttributes)), POLL).toBe(2);
    current = await startWorker();
    const { outcome, answer } = await handle.result();
    current.worker.shutdown();
    await current.running;

    if ('refused' in answer) {
      expect(answer.refused).toContain('No tool call "tool-1-call_race" is waiting for approval');
      expect(outcome).toMatchObject({ approved: false, decidedBy: 'timeout' });
    } else {
      expect(answer).toMatchObject({ approved: true, decidedBy: 'person' });
      expect(outcome).toEqual(answer);
    }
  });
});
