import { afterAll, beforeAll, describe, it } from 'vitest';
import { endSignal, postSignal } from '../../src/contract/definitions.ts';
import {
  gate,
  type LoopHarness,
  type ModelStep,
  startLoopHarness,
  type ToolDouble,
  textOf,
  untilCancelled,
} from '../support/loopHarness.ts';

const finishing = (text: string): ToolDouble => ({ run: () => ({ text, terminate: true }) });
const lookup: ToolDouble = {};
/** Runs until the workflow cancels it. */
const waits: ToolDouble = { run: ({ signal }) => untilCancelled(signal) };
const CANCELLED = (tool: string) => `Tool "${tool}" was cancelled before it finished.`;

// Each test has a conversation of its own, so they run concurrently (with the test's own `expect`).
describe.concurrent('a turn of the loop', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  describe('terminate', () => {
    it('ends the turn without another model call when every call of the batch asks to', async ({
      expect,
    }) => {
      const conversation = await loop.start({
        options: { toolExecution: 'parallel' },
        tools: { one: finishing('One.'), two: finishing('Two.') },
        model: [
          {
            calls: [
              { id: 'a', name: 'one' },
              { id: 'b', name: 'two' },
            ],
          },
        ],
      });
      expect(await conversation.prompt('finish')).toMatchObject({
        turn: 1,
        status: 'terminated',
        reply: 'One.\nTwo.',
      });
      expect(conversation.modelCalls).toHaveLength(1);
      expect((await conversation.messages()).map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'toolResult',
        'toolResult',
      ]);
    });

    it('asks the model again when any call of the batch did not ask to: an ordinary, failed or PREPARE-answered one', async ({
      expect,
    }) => {
      const batches: ModelStep[] = [
        {
          calls: [
            { id: 'a', name: 'one' },
            { id: 'l', name: 'lookup' },
          ],
        },
        {
          calls: [
            { id: 'a', name: 'one' },
            { id: 'x', name: 'broken' },
          ],
        },
        {
          calls: [
            { id: 'a', name: 'one' },
            { id: 'g', name: 'noSuchTool' },
          ],
        },
      ];
      const conversation = await loop.start({
        tools: {
          one: finishing('One.'),
          lookup,
          broken: {
            run: () => {
              throw new Error('broken for good');
            },
          },
        },
        model: [...batches, { reply: 'Carried on.' }],
      });
      expect(await conversation.prompt('mix them')).toMatchObject({
        turn: 1,
        status: 'completed',
        reply: 'Carried on.',
      });
      expect(conversation.modelCalls).toHaveLength(4);
    });
  });

  describe('cancel', () => {
    it('during a tool batch: unfinished calls get cancelled results in order, and the next prompt works', async ({
      expect,
    }) => {
      const conversation = await loop.start({
        options: { toolExecution: 'parallel' },
        tools: { quick: { parallel: false }, wait: waits },
        model: [
          {
            calls: [
              { id: 'quick', name: 'quick' },
              { id: 'waitA', name: 'wait' },
              { id: 'waitB', name: 'wait' },
              { id: 'after', name: 'quick' },
            ],
          },
          { reply: 'Back again.' },
        ],
      });
      const turn = conversation.prompt('start waiting');
      expect(await conversation.log.waitFor('start:waitA')).toBe(true);
      expect(await conversation.log.waitFor('start:waitB')).toBe(true);
      expect(await conversation.cancel()).toBe(true);
      expect(await turn).toMatchObject({
        turn: 1,
        status: 'cancelled',
        reply: '',
        error: 'The turn was cancelled.',
      });

      expect((await conversation.toolResults()).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
        ['quick', false, 'quick done'],
        ['waitA', true, CANCELLED('wait')],
        ['waitB', true, CANCELLED('wait')],
        ['after', true, CANCELLED('quick')],
      ]);
      // The running calls were told to stop; the one after them never started.
      expect(await conversation.log.waitFor('cancelled:waitA')).toBe(true);
      expect(await conversation.log.waitFor('cancelled:waitB')).toBe(true);
      expect(conversation.log.entries).not.toContain('start:after');
      expect(await conversation.status()).toMatchObject({
        state: 'idle',
        lastTurn: { status: 'cancelled' },
      });

      expect(await conversation.prompt('are you there?')).toMatchObject({
        turn: 2,
        status: 'completed',
        reply: 'Back again.',
      });
      // The model saw an answer to every call it had made.
      expect(conversation.modelCalls[1]?.seen.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'toolResult',
        'toolResult',
        'toolResult',
        'toolResult',
        'user',
      ]);
      expect(await conversation.cancel()).toBe(false);
    });

    it('in sequential mode: the calls after the running one never start', async ({ expect }) => {
      const conversation = await loop.start({
        options: { toolExecution: 'sequential' },
        tools: { lookup, wait: waits },
        model: [
          {
            calls: [
              { id: 'first', name: 'lookup' },
              { id: 'waiting', name: 'wait' },
              { id: 'third', name: 'lookup' },
            ],
          },
        ],
      });
      const turn = conversation.prompt('go');
      expect(await conversation.log.waitFor('start:waiting')).toBe(true);
      await conversation.cancel();
      expect(await turn).toMatchObject({ status: 'cancelled' });
      expect((await conversation.toolResults()).map((r) => [r.toolCallId, textOf(r)])).toEqual([
        ['first', 'first done'],
        ['waiting', CANCELLED('wait')],
        ['third', CANCELLED('lookup')],
      ]);
      expect(conversation.log.entries).not.toContain('start:third');
    });

    it('while the model is thinking: the turn ends with only the user message, and the next prompt works', async ({
      expect,
    }) => {
      const conversation = await loop.start({
        model: [({ signal }) => untilCancelled(signal), { reply: 'On time.' }],
      });
      const turn = conversation.prompt('think hard');
      await expect.poll(() => conversation.modelCalls.length).toBe(1);
      expect(await conversation.cancel()).toBe(true);
      expect(await turn).toMatchObject({ turn: 1, status: 'cancelled' });
      expect((await conversation.messages()).map((m) => m.role)).toEqual(['user']);
      expect(await conversation.prompt('again')).toMatchObject({
        turn: 2,
        status: 'completed',
        reply: 'On time.',
      });
    });
  });

  describe('model call failures', () => {
    it('a model call that fails for good ends the turn `failed` with the cause, and the conversation still answers', async ({
      expect,
    }) => {
      const conversation = await loop.start({
        model: [{ fail: 'the provider refused the request' }, { reply: 'Better now.' }],
      });
      expect(await conversation.prompt('hello')).toMatchObject({
        turn: 1,
        status: 'failed',
        reply: '',
        error: 'The model call failed: the provider refused the request',
      });
      // Not retried: the failure was final.
      expect(conversation.modelCalls).toHaveLength(1);
      expect(await conversation.prompt('hello again')).toMatchObject({
        turn: 2,
        status: 'completed',
        reply: 'Better now.',
      });
      expect(conversation.modelCalls[1]?.seen.map((m) => m.role)).toEqual(['user', 'user']);
    });

    it('retries a failing model call per the model policy, and fails the turn when the attempts run out', async ({
      expect,
    }) => {
      const fail: ModelStep = { fail: 'overloaded', retryable: true };
      const conversation = await loop.start({
        options: {
          modelPolicy: { retry: { maximumAttempts: 2, initialInterval: '10 milliseconds' } },
        },
        model: [fail, { reply: 'Second attempt worked.' }, fail, fail],
      });
      expect(await conversation.prompt('one')).toMatchObject({
        status: 'completed',
        reply: 'Second attempt worked.',
      });
      expect(await conversation.prompt('two')).toMatchObject({
        status: 'failed',
        error: 'The model call failed: overloaded',
      });
      expect(conversation.modelCalls.map((call) => [call.turn, call.attempt])).toEqual([
        [1, 1],
        [1, 2],
        [2, 1],
        [2, 2],
      ]);
    });

    it('reports a reply cut off at the output limit, and fails a turn whose reply was cut off before any text', async ({
      expect,
    }) => {
      const conversation = await loop.start({
        model: [
          { reply: 'The answer is', stopReason: 'length' },
          { reply: '', stopReason: 'length' },
        ],
      });
      expect(await conversation.prompt('long answer please')).toMatchObject({
        status: 'completed',
        reply: 'The answer is',
        error: expect.stringContaining('cut off'),
      });
      expect(await conversation.prompt('again')).toMatchObject({
        status: 'failed',
        reply: '',
        error: expect.stringContaining('before writing any reply'),
      });
    });
  });

  it('stops with `limitReached` after maxModelCallsPerTurn model calls; the next message lets the agent go on', async ({
    expect,
  }) => {
    const again: ModelStep = { calls: [{ id: 'l', name: 'lookup' }] };
    const conversation = await loop.start({
      options: { maxModelCallsPerTurn: 2 },
      tools: { lookup },
      model: [again, again, { reply: 'Finally.' }],
    });
    expect(await conversation.prompt('loop forever')).toMatchObject({
      turn: 1,
      status: 'limitReached',
      reply: '',
      error:
        'Stopped after 2 model calls in one turn without a final answer. Send another message to let the agent continue.',
    });
    expect(conversation.modelCalls).toHaveLength(2);
    expect(conversation.log.entries).toEqual(['start:l', 'end:l', 'start:l', 'end:l']);
    expect(await conversation.prompt('go on')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'Finally.',
    });
  });

  it('takes a message that arrives during the turn into its next model call, and answers both prompts', async ({
    expect,
  }) => {
    const secondQueued = gate();
    const conversation = await loop.start({
      tools: { slow: { run: () => secondQueued.opened.then(() => 'slow done') } },
      model: [{ calls: [{ id: 's', name: 'slow' }] }, { reply: 'Both answered.' }],
    });
    const first = conversation.prompt('first');
    expect(await conversation.log.waitFor('start:s')).toBe(true);
    const second = conversation.prompt('second');
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    secondQueued.open();
    const expected = { turn: 1, status: 'completed', reply: 'Both answered.' };
    expect(await first).toMatchObject(expected);
    expect(await second).toMatchObject(expected);
    const seen = conversation.modelCalls[1]?.seen ?? [];
    expect(seen.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user']);
    expect(seen.at(-1)).toMatchObject({ role: 'user', content: 'second' });
  });

  it('a message posted during a turn that is then cancelled is not lost: it gets the next turn', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      tools: { wait: waits },
      model: [{ calls: [{ id: 'w', name: 'wait' }] }, { reply: 'About the posted message.' }],
    });
    const cancelled = conversation.prompt('start');
    expect(await conversation.log.waitFor('start:w')).toBe(true);
    await conversation.handle.signal(postSignal, 'posted meanwhile');
    const waiting = conversation.prompt('prompted meanwhile');
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(2);
    await conversation.cancel();
    expect(await cancelled).toMatchObject({ turn: 1, status: 'cancelled' });
    // Both messages went to the next turn, which started on its own.
    expect(await waiting).toMatchObject({ turn: 2, status: 'completed', reply: 'About the posted message.' });
    const seen = conversation.modelCalls[1]?.seen ?? [];
    expect(seen.map((m) => (m.role === 'user' ? m.content : m.role))).toEqual([
      'start',
      'assistant',
      'toolResult',
      'posted meanwhile',
      'prompted meanwhile',
    ]);
  });

  it('an ended conversation finishes its running turn, refuses new prompts, and returns its summary', async ({
    expect,
  }) => {
    const release = gate();
    const conversation = await loop.start({
      tools: { slow: { run: () => release.opened.then(() => 'slow done') } },
      model: [{ calls: [{ id: 's', name: 'slow' }] }, { reply: 'Last words.' }],
    });
    const turn = conversation.prompt('one more thing');
    expect(await conversation.log.waitFor('start:s')).toBe(true);
    await conversation.handle.signal(endSignal);
    await expect(conversation.prompt('hello?')).rejects.toMatchObject({
      cause: { message: 'This conversation has ended; start a new one' },
    });
    release.open();
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Last words.' });
    expect(await conversation.handle.result()).toEqual({
      turns: 1,
      messageCount: 4,
      lastTurn: expect.objectContaining({ turn: 1, status: 'completed', reply: 'Last words.' }),
      spend: expect.objectContaining({ modelCalls: 2, toolCalls: 1 }),
    });
  });

  it('publishes the turn on the event log: turnStart, then turnEnd with the result', async ({ expect }) => {
    const conversation = await loop.start({ model: [{ reply: 'Hi.' }] });
    await conversation.prompt('hi');
    const events = await conversation.eventsThroughTurn(1);
    expect(events.map((e) => e.type)).toEqual(['turnStart', 'turnEnd']);
    expect(events.at(-1)).toMatchObject({ turn: 1, result: { turn: 1, status: 'completed', reply: 'Hi.' } });
  });
});
