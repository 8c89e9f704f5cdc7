import { afterAll, beforeAll, describe, it } from 'vitest';
import { compactionsQuery, compactUpdate } from '../../src/contract/definitions.ts';
import { type LoopHarness, type ModelStep, startLoopHarness } from '../support/loopHarness.ts';

/** A turn of these conversations (a short question and answer) is about 190 bytes of transcript. */
const WINDOW = 1_000;
const answers = (count: number): ModelStep[] =>
  Array.from({ length: count }, (_, index) => ({ reply: `a${index + 1}` }));

describe.concurrent('compaction in the loop', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('summarises the older turns before the model call that would pass the window, incrementally', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { compaction: { keepRecentTurns: 2 } },
      contextWindow: WINDOW,
      model: answers(20),
    });
    for (let turn = 1; turn <= 20; turn++) {
      expect(await conversation.prompt(`q${turn}`)).toMatchObject({ status: 'completed', reply: `a${turn}` });
    }
    const { compactions } = conversation;
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    // Each compaction summarises what the last one did not, folded into its summary.
    expect(compactions[0]).toMatchObject({ id: 1, from: 0 });
    expect(compactions[0]?.previous).toBeUndefined();
    for (let index = 1; index < compactions.length; index++) {
      const [before, after] = [compactions[index - 1], compactions[index]];
      expect(after).toMatchObject({ id: index + 1, from: before?.upTo });
      expect(after?.previous).toEqual({ summary: `summary of ${before?.from}-${before?.upTo}` });
    }
    // Every model call after the first compaction starts from the latest one, at a user message.
    const latest = compactions.at(-1);
    expect(conversation.modelCalls.at(-1)?.compaction).toEqual({ id: latest?.id, upTo: latest?.upTo });
    // The call right after a compaction sends its summary and two turns: the previous and the current.
    const firstAfter = conversation.modelCalls.find((call) => call.compaction?.id === latest?.id);
    expect(firstAfter?.seen.slice(latest?.upTo).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);

    const kept = await conversation.handle.query(compactionsQuery);
    expect(kept.map((c) => [c.id, c.from, c.upTo, c.trigger, c.summary])).toEqual(
      compactions.map((c) => [c.id, c.from, c.upTo, 'window', `summary of ${c.from}-${c.upTo}`]),
    );
    expect(await conversation.messages()).toHaveLength(40);
    // The event log says when and what, in the turn that compacted.
    const events = await conversation.eventsThroughTurn(20);
    expect(
      events.flatMap((event) => (event.type === 'compaction' ? [[event.id, event.from, event.upTo]] : [])),
    ).toEqual(compactions.map((c) => [c.id, c.from, c.upTo]));
  });

  it('compacts when asked, between turns; resolves null when there is nothing older to summarise', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { compaction: { keepRecentTurns: 2 } },
      model: answers(4),
    });
    await conversation.prompt('q1');
    expect(await conversation.handle.executeUpdate(compactUpdate)).toBeNull();
    for (let turn = 2; turn <= 4; turn++) await conversation.prompt(`q${turn}`);
    expect(await conversation.handle.executeUpdate(compactUpdate)).toMatchObject({
      id: 1,
      trigger: 'request',
      from: 0,
      upTo: 4,
      turn: 4,
      summary: 'summary of 0-4',
    });
    expect(conversation.compactions).toHaveLength(1);
    expect(await conversation.handle.executeUpdate(compactUpdate)).toBeNull();
  });

  it('carries its compactions and the window to the next run', async ({ expect }) => {
    const conversation = await loop.start({
      options: { compaction: { keepRecentTurns: 2 }, maxTurnsPerRun: 3 },
      contextWindow: WINDOW,
      model: answers(12),
    });
    for (let turn = 1; turn <= 12; turn++) await conversation.prompt(`q${turn}`);
    const { compactions } = conversation;
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    expect(compactions[1]).toMatchObject({ id: 2, from: compactions[0]?.upTo });
    expect((await conversation.handle.query(compactionsQuery)).map((c) => c.id)).toEqual(
      compactions.map((c) => c.id),
    );
    expect(conversation.modelCalls.at(-1)?.compaction?.id).toBe(compactions.at(-1)?.id);
  });

  it('goes on without a summary when the compaction fails for good, trying again once a turn', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { compaction: { keepRecentTurns: 2 } },
      contextWindow: WINDOW,
      compactionFails: 'the summariser is down',
      model: [
        ...answers(8),
        { calls: [{ id: 'c1', name: 'lookup' }] },
        { calls: [{ id: 'c2', name: 'lookup' }] },
        { reply: 'looked twice' },
      ],
      tools: { lookup: {} },
    });
    for (let turn = 1; turn <= 8; turn++) {
      expect(await conversation.prompt(`q${turn}`)).toMatchObject({ status: 'completed' });
    }
    const failedBefore = conversation.compactions.length;
    expect(failedBefore).toBeGreaterThan(0);
    expect(await conversation.prompt('look it up')).toMatchObject({
      status: 'completed',
      reply: 'looked twice',
    });
    // Three model calls in that turn, one compaction attempt.
    expect(conversation.compactions.length).toBe(failedBefore + 1);
    expect(conversation.modelCalls.every((call) => call.compaction === undefined)).toBe(true);
    expect(await conversation.handle.query(compactionsQuery)).toEqual([]);
  });

  it('leaves the context to be cut with compaction: false, or while no worker reports a window', async ({
    expect,
  }) => {
    const off = await loop.start({
      options: { compaction: false },
      contextWindow: WINDOW,
      model: answers(10),
    });
    const unknown = await loop.start({ model: answers(10) });
    for (let turn = 1; turn <= 10; turn++) {
      await off.prompt(`q${turn}`);
      await unknown.prompt(`q${turn}`);
    }
    expect(off.compactions).toEqual([]);
    expect(unknown.compactions).toEqual([]);
    expect(off.modelCalls.at(-1)?.compaction).toBeUndefined();
    await expect(off.handle.executeUpdate(compactUpdate)).rejects.toThrow();
  });
});
