import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { pauseUpdate, postSignal, raiseBudgetUpdate, resumeUpdate } from '../../src/contract/definitions.ts';
import type { ConversationStatus } from '../../src/contract/types/conversation.ts';
import {
  gate,
  type LoopConversation,
  type LoopHarness,
  type ModelCall,
  type ModelStep,
  startLoopHarness,
  textOf,
} from '../support/loopHarness.ts';

const CANCELLED = (tool: string) => `Tool "${tool}" was cancelled before it finished.`;

async function stopped(conversation: LoopConversation): Promise<ConversationStatus> {
  for (;;) {
    const status = await conversation.status();
    if (status.stop) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The message an Update's validator refused it with. */
async function refusal(update: Promise<unknown>): Promise<string> {
  const error = await update.then(
    () => new Error('the update was accepted'),
    (caught: unknown) => caught,
  );
  return error instanceof WorkflowUpdateFailedError ? (error.cause?.message ?? '') : String(error);
}

describe.concurrent('safe points of a turn', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('stops a turn at its model-call budget before the next model call, and resumes the same turn once it is raised', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { budget: { turn: { modelCalls: 2 } } },
      tools: { lookup: {} },
      model: [
        { calls: [{ id: 'a', name: 'lookup' }] },
        { calls: [{ id: 'b', name: 'lookup' }] },
        { reply: 'Found it.' },
      ],
    });
    const result = await conversation.prompt('find it');
    expect(result).toMatchObject({
      turn: 1,
      status: 'budgetExhausted',
      budget: { scope: 'turn', limit: 'modelCalls', allowed: 2, spent: { modelCalls: 2, toolCalls: 2 } },
    });
    expect(result.error).toContain("turn's budget of 2 model calls is reached");
    const status = await conversation.status();
    expect(status).toMatchObject({
      state: 'budgetExhausted',
      turn: 1,
      stop: { reason: 'budgetExhausted', exhausted: { limit: 'modelCalls' } },
      spend: { turn: { modelCalls: 2, toolCalls: 2 }, conversation: { modelCalls: 2, toolCalls: 2 } },
    });

    expect(await refusal(conversation.handle.executeUpdate(resumeUpdate))).toContain(
      'The budget is still exhausted',
    );
    expect(
      await conversation.handle.executeUpdate(raiseBudgetUpdate, { args: [{ turn: { modelCalls: 3 } }] }),
    ).toMatchObject({ turn: { modelCalls: 3 } });
    expect(await conversation.handle.executeUpdate(resumeUpdate)).toMatchObject({
      turn: 1,
      status: 'completed',
      reply: 'Found it.',
    });
    expect((await conversation.messages()).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'toolResult',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    const events = await conversation.eventsThroughTurn(1);
    expect(events.map((e) => e.type).filter((type) => type.startsWith('turn'))).toEqual([
      'turnStart',
      'turnStopped',
      'turnResumed',
      'turnEnd',
    ]);
    expect(events.at(-1)).toMatchObject({ spend: { turn: { modelCalls: 3, toolCalls: 2 } } });
  });

  it("stops a turn at a safe point once its Temporal Actions reach the turn's limit, and goes on when it is raised", async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { budget: { turn: { actions: 3 } } },
      tools: { lookup: {} },
      model: [{ calls: [{ id: 'a', name: 'lookup' }] }, { reply: 'Looked it up.' }],
    });
    const result = await conversation.prompt('look it up');
    expect(result).toMatchObject({
      status: 'budgetExhausted',
      budget: { scope: 'turn', limit: 'actions', allowed: 3 },
    });
    expect(result.budget?.spent.actions).toBeGreaterThanOrEqual(3);
    expect(result.error).toContain("turn's budget of 3 Temporal Actions is reached");
    await conversation.handle.executeUpdate(raiseBudgetUpdate, { args: [{ turn: { actions: null } }] });
    const resumed = await conversation.handle.executeUpdate(resumeUpdate);
    expect(resumed).toMatchObject({ turn: 1, status: 'completed', reply: 'Looked it up.' });
    // The turn's result says what it used: every one of its Actions, past the limit that stopped it.
    expect(resumed?.spend?.actions).toBeGreaterThan(result.budget?.spent.actions ?? 0);
  });

  it('stops before a tool batch that would pass the tool-call budget, runs none of it, and a cancel gives every call a result', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { budget: { conversation: { toolCalls: 2 } } },
      tools: { lookup: {} },
      model: [
        {
          calls: [
            { id: 'a', name: 'lookup' },
            { id: 'b', name: 'lookup' },
            { id: 'c', name: 'lookup' },
          ],
        },
      ],
    });
    expect(await conversation.prompt('look up three')).toMatchObject({
      status: 'budgetExhausted',
      budget: { scope: 'conversation', limit: 'toolCalls', allowed: 2, spent: { toolCalls: 0 } },
    });
    expect(conversation.log.entries).toEqual([]);
    expect(await conversation.cancel()).toBe(true);
    await expect.poll(async () => (await conversation.status()).state).toBe('idle');
    expect((await conversation.toolResults()).map((r) => textOf(r))).toEqual([
      CANCELLED('lookup'),
      CANCELLED('lookup'),
      CANCELLED('lookup'),
    ]);
    expect((await conversation.status()).lastTurn).toMatchObject({ status: 'cancelled' });
  });

  it('pauses between tool batches, never in one, takes queued messages into the resumed turn, and starts no turn while paused', async ({
    expect,
  }) => {
    const release = gate();
    const conversation = await loop.start({
      tools: {
        slow: {
          run: async () => {
            await release.opened;
            return 'slow done';
          },
        },
        quick: {},
      },
      model: [
        {
          calls: [
            { id: 's', name: 'slow' },
            { id: 'q', name: 'quick' },
          ],
        },
        (call) => ({ reply: `Saw ${call.seen.filter((m) => m.role === 'user').length} user messages.` }),
        { reply: 'Second turn.' },
      ],
    });
    const turn = conversation.prompt('work');
    expect(await conversation.log.waitFor('start:s')).toBe(true);
    expect(await conversation.handle.executeUpdate(pauseUpdate, { args: [{}] })).toBe(true);
    // The batch runs to its end; the turn stops before the next model call.
    release.open();
    const status = await stopped(conversation);
    expect(status).toMatchObject({
      state: 'paused',
      stop: { reason: 'paused' },
      pause: { prompts: 'queue' },
    });
    expect([...conversation.log.entries].sort()).toEqual(['end:q', 'end:s', 'start:q', 'start:s']);
    expect(conversation.modelCalls).toHaveLength(1);

    await conversation.handle.signal(postSignal, 'and this too');
    const queued = conversation.prompt('then this');
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(2);

    const resumed = conversation.handle.executeUpdate(resumeUpdate);
    expect(await turn).toMatchObject({ turn: 1, status: 'completed', reply: 'Saw 3 user messages.' });
    expect(await resumed).toMatchObject({ turn: 1, reply: 'Saw 3 user messages.' });
    expect(await queued).toMatchObject({ turn: 1 });
    expect(conversation.modelCalls).toHaveLength(2);

    // Paused between turns: the next prompt waits, and no turn starts, until the resume.
    await conversation.handle.executeUpdate(pauseUpdate, { args: [{ prompts: 'queue' }] });
    const later = conversation.prompt('next');
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    expect(await conversation.status()).toMatchObject({ state: 'paused', turn: 1, stop: null });
    expect(await conversation.handle.executeUpdate(resumeUpdate)).toBeNull();
    expect(await later).toMatchObject({ turn: 2, reply: 'Second turn.' });
  });

  it('refuses prompts while paused with prompts "refuse", still queues posted messages, and takes prompts again after the resume', async ({
    expect,
  }) => {
    const reading = (call: ModelCall): ModelStep => ({
      reply: `Read: ${call.seen.flatMap((m) => (m.role === 'user' ? [m.content] : [])).join(' | ')}`,
    });
    // The posted message may get a turn of its own before the prompt arrives.
    const conversation = await loop.start({ model: [reading, reading] });
    expect(await conversation.handle.executeUpdate(pauseUpdate, { args: [{ prompts: 'refuse' }] })).toBe(
      false,
    );
    expect(await refusal(conversation.prompt('let me in'))).toBe(
      'This conversation is paused by an operator and refuses new messages until it is resumed',
    );
    await conversation.handle.signal(postSignal, 'posted while paused');
    await expect.poll(async () => (await conversation.status()).pendingMessages).toBe(1);
    expect((await conversation.status()).state).toBe('paused');
    await conversation.handle.executeUpdate(resumeUpdate);
    expect(await conversation.prompt('now')).toMatchObject({
      status: 'completed',
      reply: 'Read: posted while paused | now',
    });
  });
});
