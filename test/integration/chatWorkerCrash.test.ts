import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { startTerminal, type Terminal } from '../support/tmux.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('yiem chat when the worker running a tool is killed', () => {
  let model: ScriptedModel;
  let bench: CrashBench;
  const workers: WorkerProcess[] = [];
  let terminal: Terminal | undefined;
  beforeAll(async () => {
    model = await startScriptedModel();
    bench = await createCrashBench();
  });
  afterAll(async () => {
    await terminal?.close();
    for (const worker of workers) await worker.kill();
    await model?.close();
    await bench?.remove();
  });

  it('shows the retried attempt as a retry of the lost one, then its result', async () => {
    const address = inject('temporalAddress');
    const taskQueue = `chat-crash-${randomUUID()}`;
    for (const name of ['w1', 'w2']) {
      workers.push(
        await startWorkerProcess({ name, bench, address, taskQueue, modelBaseURL: model.baseURL }),
      );
    }
    terminal = await startTerminal(
      ['node', ...YIEM_FROM_SOURCES, 'chat', '--address', address, '--task-queue', taskQueue],
      { cwd: ROOT, env: { YIEM_UI_URL: 'http://ui.test' } },
    );
    const lastPrompt = (screen: string) => screen.trimEnd().split('\n').at(-1) === 'you>';
    await terminal.waitFor(lastPrompt, 'the prompt');
    model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'Stepped despite the crash.' },
    );
    await terminal.type('take a step');
    await terminal.keys('Enter');
    await terminal.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] step\(\)/, 'the running step');
    const [first] = await bench.markers();
    const holder = workers.find((worker) => first?.endsWith(`.${worker.name}.json`));
    await holder?.kill();

    const retried = await terminal.waitFor('attempt 2', 'the retried attempt');
    expect(retried).toContain(
      '↻ step: attempt 2 (the previous attempt ended without a result: its worker stopped or timed out)',
    );
    await bench.release();
    const done = await terminal.waitFor(
      (screen) => screen.includes('agent> Stepped despite the crash.') && lastPrompt(screen),
      'the reply',
    );
    expect(done).toMatch(/✓ step: step call_step done by w\d on attempt 2/);
  }, 120_000);
});
