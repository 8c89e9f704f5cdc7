import { afterAll, beforeAll, describe, it } from 'vitest';
import { postSignal } from '../../src/contract/definitions.ts';
import { gate, type LoopHarness, startLoopHarness, untilCancelled } from '../support/loopHarness.ts';

// Each test has a conversation of its own, so they run concurrently (with the test's own `expect`).
describe.concurrent('guardrails in the loop', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('schedules no guardrail activity for a conversation that names none', async ({ expect }) => {
    const conversation = await loop.start({
      model: [{ reply: 'Hello.' }],
      guardrailVerdict: () => ({ action: 'trip', guardrail: 'never', reason: 'never asked' }),
    });
    expect(await conversation.prompt('Hi')).toMatchObject({ status: 'completed', reply: 'Hello.' });
    expect(conversation.guardrailChecks).toEqual([]);
  });

  it('a tool result tripped on is withheld: the turn ends without another model call, and the next turn reads the note', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { guardrails: { toolResult: ['secrets'] } },
      tools: { lookup: {} },
      model: [
        { calls: [{ id: 'a', name: 'lookup' }] },
        (call) => ({ reply: `seen ${call.seen.length} messages` }),
      ],
      guardrailVerdict: (message) =>
        message.role === 'toolResult'
          ? { action: 'trip', guardrail: 'secrets', reason: 'a private key' }
          : undefined,
    });
    expect(await conversation.prompt('look it up')).toMatchObject({
      turn: 1,
      status: 'guardrailTripped',
      reply: '',
      error: 'The toolResult guardrail "secrets" tripped on a tool result: a private key',
      guardrail: { stage: 'toolResult', guardrail: 'secrets', reason: 'a private key', toolCallId: 'a' },
    });
    expect(conversation.modelCalls).toHaveLength(1);
    const [, , result] = await conversation.messages();
    expect(result).toMatchObject({
      role: 'toolResult',
      toolCallId: 'a',
      isError: true,
      content: [
        {
          type: 'text',
          text: 'The result of lookup was withheld: guardrail "secrets" tripped: a private key',
        },
      ],
      guardrail: { tripped: { guardrail: 'secrets', reason: 'a private key' } },
    });
    expect(conversation.guardrailChecks.map((check) => [check.stage, check.guardrails])).toEqual([
      ['toolResult', ['secrets']],
    ]);

    expect(await conversation.prompt('and now?')).toMatchObject({
      status: 'completed',
      reply: 'seen 4 messages',
    });
  });

  it('checks each user message once, before the first model call reads it', async ({ expect }) => {
    const conversation = await loop.start({
      options: { guardrails: { input: ['polite'] } },
      tools: { lookup: {} },
      model: [{ calls: [{ id: 'a', name: 'lookup' }] }, { reply: 'Done.' }],
      guardrailVerdict: (message) =>
        message.role === 'user'
          ? { action: 'rewrite', text: `checked: ${message.content}`, rewrittenBy: ['polite'] }
          : undefined,
    });
    expect(await conversation.prompt('first')).toMatchObject({ status: 'completed' });
    const checked = conversation.guardrailChecks.map((check) => check.messages.map((m) => m.role));
    expect(checked).toEqual([['user']]);
    expect(conversation.modelCalls[0]?.seen[0]).toMatchObject({
      content: 'checked: first',
      guardrail: { rewrittenBy: ['polite'], original: 'first' },
    });
  });

  it('checks a message that a turn drained but ended before reading in the next turn, before the model reads it', async ({
    expect,
  }) => {
    let post: (() => Promise<void>) | undefined;
    const conversation = await loop.start({
      options: { guardrails: { input: ['polite'] }, maxModelCallsPerTurn: 1 },
      tools: {
        lookup: {
          run: async () => {
            await post?.();
            return { text: 'found' };
          },
        },
      },
      model: [{ calls: [{ id: 'a', name: 'lookup' }] }, { reply: 'Both answered.' }],
      guardrailVerdict: () => ({ action: 'pass' }),
    });
    post = () => conversation.handle.signal(postSignal, 'posted during the tool call');
    expect(await conversation.prompt('first')).toMatchObject({ status: 'limitReached' });
    expect(await conversation.prompt('second')).toMatchObject({ status: 'completed' });
    const checked = conversation.guardrailChecks.map((check) =>
      check.messages.map((message) => (message.role === 'user' ? message.content : message.role)),
    );
    expect(checked).toEqual([['first'], ['posted during the tool call', 'second']]);
  });

  it('a turn cancelled while its input guardrails run ends cancelled, and the message they did not check is marked so', async ({
    expect,
  }) => {
    const checking = gate();
    const conversation = await loop.start({
      options: { guardrails: { input: ['slow'] } },
      model: [{ reply: 'Hello.' }],
      guardrailVerdict: (message, signal) => {
        if (message.role !== 'user' || message.content !== 'first') return undefined;
        checking.open();
        return untilCancelled(signal);
      },
    });
    const first = conversation.prompt('first');
    await checking.opened;
    await conversation.cancel();
    expect(await first).toMatchObject({
      turn: 1,
      status: 'cancelled',
      reply: '',
      error: 'The turn was cancelled.',
    });
    expect(conversation.modelCalls).toHaveLength(0);
    // The worker's model calls leave it out (formatMessages); the next turn goes on.
    expect((await conversation.messages())[0]).toMatchObject({
      content: 'first',
      guardrail: { failed: 'the turn was cancelled first' },
    });
    expect(await conversation.prompt('second')).toMatchObject({ status: 'completed', reply: 'Hello.' });
  });
});
