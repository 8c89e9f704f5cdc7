import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  type LoopHarness,
  startLoopHarness,
  type ToolDouble,
  textOf,
  untilCancelled,
} from '../support/loopHarness.ts';

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

// Each test has a conversation of its own, so they run concurrently (with the test's own `expect`).
describe.concurrent('the tool batch', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('sequential mode runs the calls one after another, in the order the model gave them', async ({
    expect,
  }) => {
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
    expect(await conversation.prompt('run them')).toMatchObject({
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

  it('parallel mode starts consecutive calls together and returns results in the order asked, not the order finished', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: {
        // Finishes only after the later call has finished.
        slow: {
          run: async ({ log }) =>
            (await log.waitFor('end:fast', 5_000)) ? 'slow finished last' : 'slow never saw fast finish',
        },
        fast: meets('slow'),
      },
      model: [
        {
          calls: [
            { id: 'slow', name: 'slow' },
            { id: 'fast', name: 'fast' },
          ],
        },
        { reply: 'Both ran.' },
      ],
    });
    expect(await conversation.prompt('run them')).toMatchObject({ status: 'completed', reply: 'Both ran.' });
    expect(conversation.log.runningWhenStarted('fast')).toEqual(['slow']);
    expect(conversation.log.entries.filter((entry) => entry.startsWith('end:'))).toEqual([
      'end:fast',
      'end:slow',
    ]);
    expect((await conversation.toolResults()).map((r) => [r.toolCallId, textOf(r)])).toEqual([
      ['slow', 'slow finished last'],
      ['fast', 'fast met slow'],
    ]);
  });

  it('parallel mode runs a parallelToolExecute:false tool alone, in its place in the batch', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: { a: meets('b'), b: meets('a'), exclusive: takes(0, false), c: takes(0) },
      model: [
        {
          calls: [
            { id: 'a', name: 'a' },
            { id: 'b', name: 'b' },
            { id: 'alone', name: 'exclusive' },
            { id: 'c', name: 'c' },
          ],
        },
        { reply: 'Done.' },
      ],
    });
    expect(await conversation.prompt('run them')).toMatchObject({ status: 'completed', reply: 'Done.' });
    const { log } = conversation;
    expect(log.runningWhenStarted('alone')).toEqual([]);
    expect(log.entries.indexOf('start:alone')).toBeGreaterThan(
      Math.max(log.entries.indexOf('end:a'), log.entries.indexOf('end:b')),
    );
    expect(log.runningWhenStarted('c')).toEqual([]);
    expect(log.entries.indexOf('start:c')).toBeGreaterThan(log.entries.indexOf('end:alone'));
    expect((await conversation.toolResults()).map((r) => [r.toolCallId, textOf(r)])).toEqual([
      ['a', 'a met b'],
      ['b', 'b met a'],
      ['alone', 'alone done'],
      ['c', 'c done'],
    ]);
  });

  it('gives a call answered in PREPARE (an unknown tool) its result in place, without executing it', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: { lookup: takes(0) },
      model: [
        {
          calls: [
            { id: 'ghost', name: 'noSuchTool', args: { q: 1 } },
            { id: 'real', name: 'lookup' },
          ],
        },
        { reply: 'One of them worked.' },
      ],
    });
    expect(await conversation.prompt('try both')).toMatchObject({
      status: 'completed',
      reply: 'One of them worked.',
    });
    expect(conversation.log.entries).toEqual(['start:real', 'end:real']);
    const results = await conversation.toolResults();
    expect(results.map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['ghost', true, 'Tool "noSuchTool" not found. Available tools: lookup'],
      ['real', false, 'real done'],
    ]);
    expect(conversation.modelCalls[1]?.seen.slice(-2)).toEqual(results);
  });

  it('gives a call whose tool failed for good an error result naming the cause; the others of the batch keep theirs', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: {
        broken: {
          run: () => {
            throw ApplicationFailure.nonRetryable('disk on fire');
          },
        },
        lookup: takes(50),
        stuck: {
          policy: { startToCloseTimeout: '1 second' },
          run: ({ signal }) => untilCancelled(signal),
        },
      },
      model: [
        {
          calls: [
            { id: 'b', name: 'broken' },
            { id: 'l', name: 'lookup' },
            { id: 's', name: 'stuck' },
          ],
        },
        { reply: 'Two of three failed.' },
      ],
    });
    expect(await conversation.prompt('go')).toMatchObject({
      status: 'completed',
      reply: 'Two of three failed.',
    });
    expect((await conversation.toolResults()).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['b', true, 'Tool "broken" failed: disk on fire'],
      ['l', false, 'l done'],
      ['s', true, 'Tool "stuck" failed: timed out (START_TO_CLOSE)'],
    ]);
  });

  it('retries a failing attempt per the tool policy; the model gets the attempt that worked', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      tools: {
        flaky: {
          policy: { retry: { maximumAttempts: 3 } },
          run: ({ attempt }) => {
            if (attempt < 3) throw new Error(`attempt ${attempt} failed`);
            return `worked on attempt ${attempt}`;
          },
        },
      },
      model: [{ calls: [{ id: 'f', name: 'flaky' }] }, { reply: 'Got it.' }],
    });
    expect(await conversation.prompt('go')).toMatchObject({ status: 'completed', reply: 'Got it.' });
    expect(conversation.log.entries).toEqual([
      'start:f',
      'threw:f',
      'start:f',
      'threw:f',
      'start:f',
      'end:f',
    ]);
    expect((await conversation.toolResults()).map(textOf)).toEqual(['worked on attempt 3']);
  });

  it('runs two calls the model gave one tool call id as two calls, each with its result', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: { echo: { run: ({ args }) => `echo ${String(args.word)}` } },
      model: [
        {
          calls: [
            { id: 'dup', name: 'echo', args: { word: 'one' } },
            { id: 'dup', name: 'echo', args: { word: 'two' } },
          ],
        },
        { reply: 'Echoed.' },
      ],
    });
    expect(await conversation.prompt('echo twice')).toMatchObject({ status: 'completed' });
    expect((await conversation.toolResults()).map((r) => [r.toolCallId, textOf(r)])).toEqual([
      ['dup', 'echo one'],
      ['dup', 'echo two'],
    ]);
  });

  it('passes an error result a tool returned on to the model and goes on', async ({ expect }) => {
    const conversation = await loop.start({
      tools: { check: { run: () => ({ text: 'the record is locked', isError: true }) } },
      model: [{ calls: [{ id: 'c', name: 'check' }] }, { reply: 'It is locked.' }],
    });
    expect(await conversation.prompt('check it')).toMatchObject({
      status: 'completed',
      reply: 'It is locked.',
    });
    expect(await conversation.toolResults()).toMatchObject([
      { toolCallId: 'c', isError: true, content: [{ type: 'text', text: 'the record is locked' }] },
    ]);
  });
});
