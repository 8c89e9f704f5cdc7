import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ToolCallInfo } from '../../src/contract/types/tools.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { useCrashScene } from '../support/workerProcess.ts';

/**
 * Workers are separate processes killed with SIGKILL: no shutdown code runs, exactly as when a
 * machine dies. The model server stays in this process and counts every request.
 */
describe('a worker killed mid-conversation', () => {
  const scene = useCrashScene('crash');
  const { startWorker } = scene;
  const startConversation = (id: string) => scene.startConversation(id, { systemPrompt: 'Survive.' });
  const markerCall = async (marker: string): Promise<ToolCallInfo> =>
    JSON.parse(await readFile(path.join(scene.bench.markerDir, marker), 'utf8'));

  it('runs the tool again as attempt 2 with the same call id and repeats no completed model call', async () => {
    const conversation = await startConversation('crash-mid-tool');
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_step', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'All steps done.' },
    );
    const first = await startWorker('first');
    const reply = conversation.send('do the step');
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toEqual(['call_step.1.first.json']);

    await first.kill();
    await scene.bench.release();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'All steps done.' });
    expect(await scene.bench.markers()).toEqual(['call_step.1.first.json', 'call_step.2.second.json']);
    const [attempt1, attempt2] = await Promise.all([
      markerCall('call_step.1.first.json'),
      markerCall('call_step.2.second.json'),
    ]);
    expect(attempt1).toMatchObject({ toolCallId: 'call_step', attempt: 1 });
    expect(attempt2).toMatchObject({ toolCallId: 'call_step', attempt: 2 });
    expect(attempt2.idempotencyKey).toBe(attempt1.idempotencyKey);
    // One request that asked for the tool, one after it: the first model call was not made again.
    expect(scene.model.requestCount).toBe(2);

    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    const result = messages[2] as ToolResultMessage;
    expect(result).toMatchObject({ toolCallId: 'call_step', isError: false });
    expect(result.content[0]?.text).toBe('step call_step done by second on attempt 2');
    await replayAndRecord(conversation.handle, 'worker-crash-mid-tool');
  });

  it("runs a local tool call again on the next worker, from its first attempt, once the killed worker's workflow task times out", async () => {
    const conversation = await startConversation('crash-mid-local-tool');
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_local', name: 'localStep', arguments: {} }] },
      { kind: 'text', text: 'Local step done.' },
    );
    const first = await startWorker('first');
    const reply = conversation.send('do the local step');
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toEqual(['call_local.1.first.json']);

    await first.kill();
    await scene.bench.release();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Local step done.' });
    // A local activity's start is not recorded: the lost attempt leaves no trace, and the call starts over.
    expect(await scene.bench.markers()).toEqual(['call_local.1.first.json', 'call_local.1.second.json']);
    const [lost, rerun] = await Promise.all([
      markerCall('call_local.1.first.json'),
      markerCall('call_local.1.second.json'),
    ]);
    expect(rerun.idempotencyKey).toBe(lost.idempotencyKey);
    expect(scene.model.requestCount).toBe(2);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result).toMatchObject({ toolCallId: 'call_local', isError: false });
    expect(result.content[0]?.text).toBe('local step call_local done by second on attempt 1');
  });

  it('retries a model call whose worker died, with the same context, and keeps the tool result', async () => {
    const conversation = await startConversation('crash-mid-model');
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_before', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'never delivered', delayMs: 60_000 },
      { kind: 'text', text: 'Answered after the crash.' },
    );
    const first = await startWorker('first');
    await scene.bench.release();
    const reply = conversation.send('step, then answer');
    await expect.poll(() => scene.model.requestCount, { timeout: 30_000 }).toBe(2);

    await first.kill();
    await startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Answered after the crash.' });
    expect(scene.model.requestCount).toBe(3);
    // The retried call sent exactly what the lost one had sent.
    expect(scene.model.requests[2]?.body.messages).toEqual(scene.model.requests[1]?.body.messages);
    // The tool finished before the crash and did not run again.
    expect(await scene.bench.markers()).toEqual(['call_before.1.first.json']);
    const roles = (await conversation.messages()).map((message) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('lets the surviving one of two workers on the task queue finish the work', async () => {
    const conversation = await startConversation('two-workers');
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_shared', name: 'step', arguments: {} }] },
      { kind: 'text', text: 'Finished by the survivor.' },
    );
    await Promise.all([startWorker('alpha'), startWorker('beta')]);
    const reply = conversation.send('work');
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toHaveLength(1);
    const [marker] = await scene.bench.markers();
    const busy = scene.workers.find((worker) => marker?.endsWith(`.${worker.name}.json`));
    const survivor = scene.workers.find((worker) => worker !== busy);
    if (!busy || !survivor) throw new Error(`no worker owns marker ${marker}`);

    await busy.kill();
    await scene.bench.release();

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Finished by the survivor.' });
    expect(await scene.bench.markers()).toEqual([marker, `call_shared.2.${survivor.name}.json`]);
    expect(scene.model.requestCount).toBe(2);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result.content[0]?.text).toBe(`step call_shared done by ${survivor.name} on attempt 2`);
  });
});
