import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ToolBatchCheckpoint } from '../../src/contract/protocol.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { useCrashScene } from '../support/workerProcess.ts';

/** The calls the running `executeTools` attempt's last heartbeat that reached the server names as done. */
async function checkpointedCalls(conversation: Conversation): Promise<string[]> {
  const { raw } = await conversation.handle.describe();
  const batch = raw.pendingActivities?.find((activity) => activity.activityType?.name === 'executeTools');
  const [details] = batch?.heartbeatDetails?.payloads ?? [];
  if (!details) return [];
  const checkpoint = defaultPayloadConverter.fromPayload<ToolBatchCheckpoint>(details as never);
  return checkpoint.done.map((entry) => entry.toolCallId);
}

/**
 * A worker SIGKILLed in the middle of a batch of tool calls (`batched: true`, one `executeTools`
 * activity): the next worker's attempt takes the calls the last checkpoint names as done and runs
 * only the others.
 */
describe('a worker killed mid-batch', () => {
  const scene = useCrashScene('batch-crash');

  it('runs again only the call the last checkpoint does not name, and the turn completes', async () => {
    const conversation = await scene.startConversation('crash-mid-batch', { systemPrompt: 'Survive.' });
    scene.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'one', name: 'batchedStep', arguments: {} },
          { id: 'two', name: 'batchedStep', arguments: {} },
          { id: 'three', name: 'batchedStep', arguments: { wait: true } },
          { id: 'four', name: 'batchedStep', arguments: {} },
        ],
      },
      { kind: 'text', text: 'All steps done.' },
    );
    const first = await scene.startWorker('first');
    const reply = conversation.send('do the steps');
    await expect.poll(scene.bench.markers, { timeout: 30_000 }).toContain('three.1.first.json');
    // In parallel mode (the scene's conversations') the other three end at once beside "three"; their
    // checkpoints reach the server with the attempt's heartbeats.
    await expect
      .poll(async () => (await checkpointedCalls(conversation)).sort(), { timeout: 30_000 })
      .toEqual(['four', 'one', 'two']);

    await first.kill();
    await scene.bench.release();
    await scene.startWorker('second');

    expect(await reply).toMatchObject({ status: 'completed', reply: 'All steps done.' });
    expect(await scene.bench.markers()).toEqual([
      'four.1.first.json',
      'one.1.first.json',
      'three.1.first.json',
      'three.2.second.json',
      'two.1.first.json',
    ]);
    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(results.map((result) => result.content[0]?.text)).toEqual([
      'batched step one done by first on attempt 1',
      'batched step two done by first on attempt 1',
      'batched step three done by second on attempt 2',
      'batched step four done by first on attempt 1',
    ]);
    // The log shows every call, the checkpointed ones told again by the attempt that resumed.
    const ended: string[] = [];
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolEnd') ended.push(`${event.toolCallId}#${event.attempt}`);
      if (event.type === 'turnEnd') break;
    }
    expect(ended).toEqual(expect.arrayContaining(['one#2', 'two#2', 'three#2', 'four#2']));
    expect(ended).not.toContain('three#1');
    await replayAndRecord(conversation.handle, 'worker-crash-mid-batch');
  });
});
