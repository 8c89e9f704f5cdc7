import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { runEval } from '../../src/client/evals/runEval.ts';
import type { EvalProgress } from '../../src/contract/evals.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

const CASES = 8;
const TURNS = ['first', 'second'];

type Message = { role: string; content: string | null };
/** The user message a request answers: which case and turn it belongs to. */
const asked = (messages: readonly Message[]): string =>
  String(messages.filter((m) => m.role === 'user').at(-1)?.content);

/**
 * The candidate's worker is a separate process killed with SIGKILL in the middle of an eval run; a
 * second one finishes it. The model server stays here and counts what each turn asked.
 */
describe('an eval run whose worker is killed', () => {
  const address = inject('temporalAddress');
  let kept: TestAgent;
  let model: ScriptedModel;
  let bench: CrashBench;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    [kept, model, bench] = await Promise.all([startTestAgent(), startScriptedModel(), createCrashBench()]);
    kept.model.respond((request) => ({
      kind: 'text',
      text: `kept answer to ${asked(request.body.messages as Message[])}`,
    }));
    // The candidate takes its time, so that the kill lands while cases run.
    model.respond((request) => ({
      kind: 'text',
      text: `new answer to ${asked(request.body.messages as Message[])}`,
      delayMs: 400,
    }));
  });
  afterAll(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    await Promise.all([kept?.close(), model?.close(), bench?.remove()]);
  });

  it('finishes on the next worker without running a finished case again', async () => {
    const ids: string[] = [];
    for (let index = 0; index < CASES; index++) {
      // Model calls of the replays (which take these options) are retried soon after a worker dies.
      const conversation = await kept.client.startConversation({
        systemPrompt: 'You answer.',
        modelPolicy: { heartbeatTimeout: '2 seconds', retry: { initialInterval: '100 milliseconds' } },
      });
      for (const turn of TURNS) await conversation.send(`case ${index} ${turn}`);
      await conversation.end();
      ids.push(conversation.id);
    }
    const taskQueue = `eval-crash-${randomUUID()}`;
    const start = (name: string) =>
      startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model.baseURL }).then((worker) => {
        workers.push(worker);
        return worker;
      });
    const first = await start('first');
    const client = new AgentClient({ address, taskQueue });
    let progress: EvalProgress | undefined;
    const running = runEval(client, {
      conversations: ids,
      candidate: { taskQueue },
      concurrency: 2,
      expectations: { all: { replyMatches: '^new answer to case \\d+ second$' } },
      onProgress: (seen) => {
        progress = seen;
      },
    });
    await expect
      .poll(() => progress?.finished.length ?? 0, { timeout: 60_000, interval: 50 })
      .toBeGreaterThanOrEqual(2);
    const finishedBefore = [...(progress?.finished ?? [])];
    // The kill lands with cases still to run.
    expect(finishedBefore.length).toBeLessThan(CASES);
    const askedBefore = model.requests.map((request) => asked(request.body.messages as Message[]));
    await first.kill();
    await start('second');

    const report = await running;
    await client.close();
    expect(report.summary).toMatchObject({ cases: CASES, passed: CASES });
    const askedAll = model.requests.map((request) => asked(request.body.messages as Message[]));
    // A case that had finished before the kill asked nothing more of the model.
    for (const caseId of finishedBefore) {
      const index = ids.indexOf(caseId);
      const ofCase = (list: string[]) => list.filter((text) => text.startsWith(`case ${index} `));
      expect(ofCase(askedAll)).toEqual(ofCase(askedBefore));
      expect(ofCase(askedAll)).toEqual([`case ${index} first`, `case ${index} second`]);
    }
    // Every case's replay took each turn once: the retried ones found their conversation.
    for (const each of report.cases) {
      expect(each.turns.map((turn) => turn.new.reply)).toEqual(
        TURNS.map((turn) => `new answer to case ${ids.indexOf(each.caseId)} ${turn}`),
      );
      const messages = await kept.client.getConversation(each.conversationId).messagesOrHistory();
      expect(messages.messages.filter((message) => message.role === 'user')).toHaveLength(TURNS.length);
    }
  }, 150_000);
});
