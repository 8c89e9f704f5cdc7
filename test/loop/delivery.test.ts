import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { postSignal, promptUpdate } from '../../src/contract/definitions.ts';
import type { DeliveryOptions, Message, UserMessage } from '../../src/contract/types/messages.ts';
import {
  gate,
  type LoopConversation,
  type LoopHarness,
  startLoopHarness,
  type ToolDouble,
  textOf,
  untilCancelled,
} from '../support/loopHarness.ts';

const INTERRUPTED = (tool: string) =>
  `Tool "${tool}" was interrupted by a new message before it finished; the message follows.`;

/** Runs until the workflow cancels it. */
const waits: ToolDouble = { run: ({ signal }) => untilCancelled(signal) };

function send(conversation: LoopConversation, text: string, options?: DeliveryOptions, updateId?: string) {
  return conversation.handle.executeUpdate(promptUpdate, {
    args: options ? [text, options] : [text],
    ...(updateId ? { updateId } : {}),
  });
}

function userMessages(messages: readonly Message[]): UserMessage[] {
  return messages.filter((message): message is UserMessage => message.role === 'user');
}

/** The roles and user texts a model call read, in order. */
function shape(messages: readonly Message[]): string[] {
  return messages.map((message) => (message.role === 'user' ? `user:${message.content}` : message.role));
}

/** Resolves once the conversation has taken `count` pending messages. */
async function pendingMessages(conversation: LoopConversation, count: number): Promise<void> {
  while ((await conversation.status()).pendingMessages < count)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

describe.concurrent('deliveries of a message sent while a turn runs', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('steer: joins the next model call of the running turn after the batch, never inside it', async ({
    expect,
  }) => {
    const slow = gate();
    const conversation = await loop.start({
      tools: { slow: { run: () => slow.opened.then(() => 'slow done') }, lookup: {} },
      model: [
        { calls: [{ id: 'a', name: 'slow' }] },
        { calls: [{ id: 'b', name: 'lookup' }] },
        { reply: 'Done, in Celsius.' },
      ],
    });
    const first = send(conversation, 'what is the weather');
    expect(await conversation.log.waitFor('start:a')).toBe(true);
    await conversation.handle.signal(postSignal, 'in Celsius please', { delivery: 'steer' });
    await pendingMessages(conversation, 1);
    slow.open();
    expect(await first).toMatchObject({ turn: 1, status: 'completed', reply: 'Done, in Celsius.' });
    expect(conversation.modelCalls.map((call) => shape(call.seen))).toEqual([
      ['user:what is the weather'],
      ['user:what is the weather', 'assistant', 'toolResult', 'user:in Celsius please'],
      [
        'user:what is the weather',
        'assistant',
        'toolResult',
        'user:in Celsius please',
        'assistant',
        'toolResult',
      ],
    ]);
    expect(userMessages(await conversation.messages())).toMatchObject([
      { content: 'what is the weather', delivery: 'steer', turn: 1 },
      { content: 'in Celsius please', delivery: 'steer', turn: 1 },
    ]);
    const events = await conversation.eventsThroughTurn(1);
    expect(
      events
        .filter((event) => event.type === 'messageQueued' || event.type === 'messageDelivered')
        .map(({ offset: _offset, seq: _seq, attempt: _attempt, ...event }) => event),
    ).toEqual([
      { type: 'messageQueued', turn: 1, messageId: 1, delivery: 'steer', text: 'in Celsius please' },
      { type: 'messageDelivered', turn: 1, messageId: 1, delivery: 'steer', afterModelCall: 1 },
    ]);
  });

  it('followUp: waits until the running turn has ended, then its own turn answers it', async ({ expect }) => {
    const slow = gate();
    const conversation = await loop.start({
      tools: { slow: { run: () => slow.opened.then(() => 'slow done') } },
      model: [
        { calls: [{ id: 'a', name: 'slow' }] },
        { reply: 'First answer.' },
        { reply: 'Second answer.' },
      ],
    });
    const first = send(conversation, 'first question');
    expect(await conversation.log.waitFor('start:a')).toBe(true);
    const followUp = send(conversation, 'and then this', { delivery: 'followUp' });
    await pendingMessages(conversation, 1);
    slow.open();
    expect(await first).toMatchObject({ turn: 1, status: 'completed', reply: 'First answer.' });
    expect(await followUp).toMatchObject({ turn: 2, status: 'completed', reply: 'Second answer.' });
    expect(shape(conversation.modelCalls[1]?.seen ?? [])).toEqual([
      'user:first question',
      'assistant',
      'toolResult',
    ]);
    expect(conversation.modelCalls[2]?.turn).toBe(2);
    expect(userMessages(await conversation.messages())).toMatchObject([
      { content: 'first question', delivery: 'steer', turn: 1 },
      { content: 'and then this', delivery: 'followUp', turn: 2 },
    ]);
  });

  it('interrupt: cancels the running batch, every unfinished call says why, and the same turn reads the message at once', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'sequential' },
      tools: { waits, lookup: {} },
      model: [
        {
          calls: [
            { id: 'a', name: 'waits' },
            { id: 'b', name: 'lookup' },
          ],
        },
        { reply: 'Stopped; doing the other thing.' },
      ],
    });
    const first = send(conversation, 'long job');
    expect(await conversation.log.waitFor('start:a')).toBe(true);
    const interrupt = send(conversation, 'stop, do the other thing', { delivery: 'interrupt' });
    const result = { turn: 1, status: 'completed', reply: 'Stopped; doing the other thing.' };
    expect(await interrupt).toMatchObject(result);
    expect(await first).toMatchObject(result);
    expect(await conversation.log.waitFor('cancelled:a')).toBe(true);
    expect(conversation.log.entries).not.toContain('start:b');
    const results = await conversation.toolResults();
    expect(results.map((each) => [each.toolCallId, textOf(each), each.isError])).toEqual([
      ['a', INTERRUPTED('waits'), true],
      ['b', INTERRUPTED('lookup'), true],
    ]);
    expect(shape(conversation.modelCalls[1]?.seen ?? [])).toEqual([
      'user:long job',
      'assistant',
      'toolResult',
      'toolResult',
      'user:stop, do the other thing',
    ]);
    const events = await conversation.eventsThroughTurn(1);
    expect(events.find((event) => event.type === 'messageDelivered' && event.messageId === 1)).toMatchObject({
      delivery: 'interrupt',
      afterModelCall: 1,
      interruptedCalls: 2,
    });
  });

  it('interrupt sent while the model is called: the batch that call asks for does not start', async ({
    expect,
  }) => {
    const thinking = gate();
    const conversation = await loop.start({
      tools: { lookup: {} },
      model: [
        async () => {
          await thinking.opened;
          return { calls: [{ id: 'a', name: 'lookup' }] };
        },
        { reply: 'Fine.' },
      ],
    });
    const first = send(conversation, 'look it up');
    while (conversation.modelCalls.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const interrupt = send(conversation, 'never mind', { delivery: 'interrupt' });
    await pendingMessages(conversation, 1);
    thinking.open();
    expect(await interrupt).toMatchObject({ turn: 1, reply: 'Fine.' });
    expect(await first).toMatchObject({ turn: 1, reply: 'Fine.' });
    expect(conversation.log.entries).toEqual([]);
    expect((await conversation.toolResults()).map(textOf)).toEqual([INTERRUPTED('lookup')]);
  });

  it('adds a message sent again with the same key once, and a retried prompt gets the first one`s turn', async ({
    expect,
  }) => {
    const slow = gate();
    const conversation = await loop.start({
      tools: { slow: { run: () => slow.opened.then(() => 'slow done') } },
      model: [{ calls: [{ id: 'a', name: 'slow' }] }, { reply: 'Answered.' }, { reply: 'Later.' }],
    });
    const first = send(conversation, 'question', { key: 'q-1' }, 'update-1');
    expect(await conversation.log.waitFor('start:a')).toBe(true);
    // A retry through another Update id (a new run's, say) and a posted message sent twice.
    const retried = (
      await conversation.handle.startUpdate(promptUpdate, {
        args: ['question', { key: 'q-1' }],
        updateId: 'update-2',
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      })
    ).result();
    await conversation.handle.signal(postSignal, 'note', { key: 'note-1' });
    await conversation.handle.signal(postSignal, 'note', { key: 'note-1' });
    await pendingMessages(conversation, 1);
    slow.open();
    const answered = { turn: 1, status: 'completed', reply: 'Answered.' };
    expect(await first).toMatchObject(answered);
    expect(await retried).toMatchObject(answered);
    // After the turn: the latest turn's result again, with no new message or model call.
    expect(await send(conversation, 'question', { key: 'q-1' }, 'update-3')).toMatchObject(answered);
    expect(userMessages(await conversation.messages()).map((message) => message.content)).toEqual([
      'question',
      'note',
    ]);
    expect(conversation.modelCalls).toHaveLength(2);
  });

  it('remembers the keys across continue-as-new: a retry in the next run adds nothing', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { maxTurnsPerRun: 1 },
      model: [{ reply: 'Once.' }],
    });
    const answered = { turn: 1, status: 'completed', reply: 'Once.' };
    expect(await send(conversation, 'only once', { key: 'once-1' }, 'first-run')).toMatchObject(answered);
    // Its one turn done, the run hands over to the next one, where the retry arrives.
    const { firstExecutionRunId } = conversation.handle as { firstExecutionRunId?: string };
    await expect.poll(async () => (await conversation.handle.describe()).runId).not.toBe(firstExecutionRunId);
    expect(await send(conversation, 'only once', { key: 'once-1' }, 'next-run')).toMatchObject(answered);
    expect(userMessages(await conversation.messages()).map((message) => message.content)).toEqual([
      'only once',
    ]);
  });

  it('refuses a delivery it does not know, naming the three', async ({ expect }) => {
    const conversation = await loop.start({ model: [] });
    const refused = await send(conversation, 'hello', { delivery: 'later' as never }).then(
      () => new Error('accepted'),
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toBe(
      'delivery must be one of steer, followUp, interrupt; got "later"',
    );
  });
});
