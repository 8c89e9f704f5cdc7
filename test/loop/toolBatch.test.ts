import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopHarness, startLoopHarness, type ToolDouble, textOf } from '../support/loopHarness.ts';

/** Waits until `peer` has started too, then answers whether it did: proof that the two ran together. */
const meets = (peer: string): ToolDouble => ({
  run: async ({ toolCallId, log }) =>
    (await log.waitFor(`start:${peer}`, 5_000)) ? `${toolCallId} met ${peer}` : `${toolCallId} ran alone`,
});

/** Answers after `ms`, so that a later call in the batch finishes first if they run together. */
const takes = (ms: number, parallel = true): ToolDouble => ({
  parallel,
  run: async ({ toolCallId }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return `${toolCallId} done`;
  },
});

describe('the tool batch', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('sequential mode runs the calls one after another, in the order the model gave them', async () => {
    const conversation = await loop.start({
      options: { toolExecution: 'sequential' },
      tools: { slow: takes(150), fast: takes(0) },
      model: [
        {
          calls: [
            { id: 'first', name: 'slow' },
            { id: 'second', name: 'fast' },
            { id: 'third', name: 'slow' },
          ],
        },
        { reply: 'All three ran.' },
      ],
    });
    expect(await conversation.prompt('run them')).toEqual({
      turn: 1,
      status: 'completed',
      reply: 'All three ran.',
    });
    expect(conversation.log.entries).toEqual([
      'start:first',
      'end:first',
      'start:second',
      'end:second',
      'start:third',
      'end:third',
    ]);
    expect((await conversation.toolResults()).map((r) => [r.toolCallId, textOf(r)])).toEqual([
      ['first', 'first done'],
      ['second', 'second done'],
      ['third', 'third done'],
    ]);
    // The second model call saw every result, after the assistant message that asked for them.
    expect(conversation.modelCalls[1]?.seen.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'toolResult',
      'toolResult',
    ]);
  });
});
