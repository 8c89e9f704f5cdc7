import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { activityGate } from '../support/activityGate.ts';
import { FAST_MODEL_RETRY, startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { historyText } from '../support/history.ts';

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks something up in three steps',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args, _signal, onPartialResult) => {
    onPartialResult({ step: 1, of: 3 });
    onPartialResult({ step: 2, of: 3 });
    onPartialResult({ step: 3, of: 3 });
    return textResult(`Sunny in ${String(args.city)}`);
  },
};

/** Lets the running `slow` tool finish. */
let finishSlowTool = (): void => {};

const slowTool: AgentTool = {
  name: 'slow',
  label: 'Slow',
  description: 'Works until the test lets it finish',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: async (_id, _args, _signal, onPartialResult) => {
    onPartialResult({ started: true });
    await new Promise<void>((resolve) => {
      finishSlowTool = resolve;
    });
    return textResult('finished slowly');
  },
};

/** Holds the `tools` Update's activity, so the Update stays unfinished. */
const toolListing = activityGate('listTools');

/** Follows the conversation's events until the end of `turn`. */
async function collectTurn(
  events: AsyncIterable<ConversationEventItem>,
  turn: number,
  seen: (event: ConversationEventItem) => void = () => {},
): Promise<ConversationEventItem[]> {
  const collected: ConversationEventItem[] = [];
  for await (const event of events) {
    collected.push(event);
    seen(event);
    if (event.type === 'turnEnd' && event.turn === turn) break;
  }
  return collected;
}

const textOf = (events: ConversationEventItem[]): string =>
  events.map((event) => (event.type === 'textDelta' ? event.text : '')).join('');

/** The trace of a turn in which the model calls `lookup` once, then answers. */
const LOOKUP_TURN = [
  'turnStart',
  'messageStart#1',
  'messageEnd',
  'toolStart lookup',
  'toolProgress {"step":1,"of":3}',
  'toolProgress {"step":2,"of":3}',
  'toolProgress {"step":3,"of":3}',
  'toolEnd lookup',
  'messageStart#1',
  'messageEnd',
  'turnEnd',
];

/** A compact, readable trace: what a person watching the conversation would see, in order. */
const trace = (events: ConversationEventItem[]): string[] =>
  events.flatMap((event) => {
    switch (event.type) {
      case 'textDelta':
        return [];
      case 'messageStart':
        return [`messageStart#${event.attempt}`];
      case 'toolStart':
      case 'toolEnd':
        return [`${event.type} ${event.toolName}`];
      case 'toolProgress':
        return [`toolProgress ${JSON.stringify(event.partialResult)}`];
      default:
        return [event.type];
    }
  });

describe('following a conversation live', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [lookup, slowTool],
      worker: { worker: { options: { interceptors: { activity: [toolListing.interceptor] } } } },
    });
  });
  afterAll(async () => agent?.close());

  it('sees text deltas, tool progress and the final reply in order, live, and resumes from an offset', async () => {
    const reply = 'Tokyo is sunny today, with a light breeze from the bay.';
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        text: 'Let me look that up.',
        toolCalls: [{ name: 'lookup', arguments: { city: 'Tokyo' } }],
      },
      { kind: 'text', text: reply, deltaDelayMs: 120 },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    let replied = false;
    let deltaBeforeReply = false;
    const following = collectTurn(conversation.events({ liveChannel: false }), 1, (event) => {
      if (event.type === 'textDelta' && event.text !== '' && !replied && reply.startsWith(event.text)) {
        deltaBeforeReply = true;
      }
    });
    const result = await conversation.send('Weather in Tokyo?');
    replied = true;
    const events = await following;

    expect(result).toMatchObject({ status: 'completed', reply });
    // The final message's text reached the follower while the model was still writing it.
    expect(deltaBeforeReply).toBe(true);
    expect(trace(events)).toEqual(LOOKUP_TURN);
    const secondMessage = events.findLastIndex((event) => event.type === 'messageStart');
    expect(textOf(events.slice(0, secondMessage))).toBe('Let me look that up.');
    expect(textOf(events.slice(secondMessage))).toBe(reply);
    expect(events.find((event) => event.type === 'toolEnd')).toMatchObject({
      isError: false,
      text: 'Sunny in Tokyo',
    });
    expect(events.at(-1)).toMatchObject({ type: 'turnEnd', turn: 1, result: { reply } });
    // Offsets are the log's positions: consecutive from 0, and every event names its turn.
    expect(events.map((event) => event.offset)).toEqual(events.map((_, index) => index));
    expect(events.every((event) => event.turn === 1)).toBe(true);

    // A follower that lost its connection after the tool started picks up exactly where it left off.
    const cut = events.findIndex((event) => event.type === 'toolStart');
    const resumed = await collectTurn(conversation.events({ fromOffset: cut + 1, liveChannel: false }), 1);
    expect(resumed).toEqual(events.slice(cut + 1));
  });

  it('batches deltas: a reply streamed character by character is a handful of events, and history keeps the message once', async () => {
    const reply = 'One two three four five six seven eight nine ten eleven twelve.';
    agent.model.enqueue({ kind: 'text', text: reply });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const following = collectTurn(conversation.events({ liveChannel: false }), 1);
    await conversation.send('count');
    const deltas = (await following).filter((event) => event.type === 'textDelta');
    expect(deltas.map((delta) => delta.text).join('')).toBe(reply);
    expect(deltas.length).toBeLessThan(Array.from(reply).length / 4);
    // A reply this quick hands its events over with the message, so history holds the text in the
    // message and in the prompt's result, never again in deltas, and never once per token.
    const history = await historyText(conversation.handle);
    expect(history).not.toContain('"text":"O"');
    expect(history.split(reply).length - 1).toBe(2);
  });

  it("sends a quick turn's events with the results, not by signal, and a slow tool's events live", async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
      { kind: 'text', text: 'Oslo is sunny.' },
      { kind: 'toolCalls', toolCalls: [{ name: 'slow', arguments: {} }] },
      { kind: 'text', text: 'The slow one finished.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const quick = collectTurn(conversation.events({ liveChannel: false }), 1);
    await conversation.send('Weather in Oslo?');
    expect(trace(await quick)).toEqual(LOOKUP_TURN);
    expect(textOf(await quick)).toBe('Oslo is sunny.');
    const signals = async () =>
      (await historyText(conversation.handle)).split('__temporal_workflow_stream_publish').length - 1;
    expect(await signals()).toBe(0);

    // The slow tool's start and progress reach the follower while it is still running.
    const slow = collectTurn(conversation.events({ liveChannel: false }), 2, (event) => {
      if (event.type === 'toolProgress' && event.toolName === 'slow') finishSlowTool();
    });
    const result = await conversation.send('Run the slow one');
    expect(result).toMatchObject({ status: 'completed', reply: 'The slow one finished.' });
    expect(trace(await slow)).toContain('toolProgress {"started":true}');
    expect(await signals()).toBeGreaterThan(0);
  });

  it('shows a retried model call restarting its partial text', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'This first attempt never finishes', deltaDelayMs: 60, dropAfterDeltas: 3 },
      { kind: 'error', status: 500, message: 'overloaded' },
      { kind: 'text', text: 'The answer is 42.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      modelPolicy: { retry: { ...FAST_MODEL_RETRY.retry, maximumAttempts: 5 } },
    });
    const following = collectTurn(conversation.events({ liveChannel: false }), 1);
    const result = await conversation.send('What is the answer?');
    const events = await following;

    expect(result).toMatchObject({ status: 'completed', reply: 'The answer is 42.' });
    expect(trace(events)).toEqual([
      'turnStart',
      'messageStart#1',
      // Attempt 2 failed before producing anything, so it published nothing.
      'messageStart#3',
      'messageEnd',
      'turnEnd',
    ]);
    const byAttempt = (attempt: number) => textOf(events.filter((event) => event.attempt === attempt));
    // Attempt 1 streamed part of its text before the connection dropped; attempt 3 starts over.
    expect(byAttempt(1)).not.toBe('');
    expect('This first attempt never finishes'.startsWith(byAttempt(1))).toBe(true);
    expect(byAttempt(2)).toBe('');
    expect(byAttempt(3)).toBe('The answer is 42.');
    // Each attempt numbers its own events from 0.
    for (const attempt of [1, 2, 3]) {
      const seqs = events.filter(
        (event) => event.attempt === attempt && event.type !== 'turnStart' && event.type !== 'turnEnd',
      );
      expect(seqs.map((event) => event.seq)).toEqual(seqs.map((_, index) => index));
    }
  });

  it('keeps following, with offsets that go on, when the conversation continues as new', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'one' },
      { kind: 'text', text: 'two' },
      { kind: 'text', text: 'three' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxTurnsPerRun: 1 });
    const firstRun = (await conversation.handle.describe()).runId;
    const following = collectTurn(conversation.events({ liveChannel: false }), 3);
    for (const text of ['a', 'b', 'c']) await conversation.send(text);
    const events = await following;

    expect((await conversation.handle.describe()).runId).not.toBe(firstRun);
    expect(events.map((event) => event.offset)).toEqual(events.map((_, index) => index));
    const replies = events.flatMap((event) => (event.type === 'turnEnd' ? [event.result.reply] : []));
    expect(replies).toEqual(['one', 'two', 'three']);
    const first = agent.client.client.workflow.getHandle(conversation.id, firstRun);
    await replayAndRecord(first, 'continue-as-new-with-follower');
  });

  it('takes followers back when a prompt comes after they were let go for a new run', async () => {
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxTurnsPerRun: 1 });
    const seen: string[] = [];
    const following = collectTurn(conversation.events({ liveChannel: false }), 2, (event) =>
      seen.push(...trace([event])),
    );
    // An unfinished Update keeps the run from continuing as new after turn 1, once it has let its
    // followers go; the prompt that comes meanwhile gets its turn in this run.
    toolListing.close();
    const tools = conversation.tools();
    try {
      await toolListing.reached();
      agent.model.enqueue({ kind: 'text', text: 'one' });
      expect(await conversation.send('a')).toMatchObject({ turn: 1, reply: 'one' });
      agent.model.enqueue(
        { kind: 'toolCalls', toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] },
        { kind: 'text', text: 'two' },
      );
      const second = conversation.send('b');
      // The follower sees turn 2 while it runs, not only once the run has moved on.
      await expect.poll(() => seen.includes('toolProgress {"started":true}'), { timeout: 15_000 }).toBe(true);
      finishSlowTool();
      expect(await second).toMatchObject({ turn: 2, reply: 'two' });
    } finally {
      finishSlowTool();
      toolListing.release();
    }
    expect((await tools).map((tool) => tool.name)).toContain('slow');
    const events = await following;
    expect(events.filter((event) => event.type === 'turnEnd').map((event) => event.turn)).toEqual([1, 2]);
  });
});
