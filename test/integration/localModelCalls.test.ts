import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentDefinition } from '../../src/contract/types/agents.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { FAST_MODEL_RETRY, startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scriptAgents } from '../support/agentScript.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { executions } from '../support/history.ts';

/**
 * A conversation started with `modelPolicy: { localActivity: true }` runs the model calls nobody
 * follows as local activities: the history has a `LocalActivity` marker per call instead of a
 * `callModel` activity, with the same replies, tool calls and events. The run's first call, a followed
 * call and a call whose worker lacks the context stay activities.
 */

const echo: ActivityTool = {
  name: 'echo',
  label: 'echo',
  description: 'Says its text back',
  parallelToolExecute: true,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async (_toolCallId, args) => textResult(`echo: ${String(args.text)}`),
};

/** A sub-agent that echoes once and answers. */
const researcher: AgentDefinition = {
  name: 'researcher',
  description: 'Looks things up',
  systemPrompt: 'You research.',
};

/** The log's events up to the end of turn `lastTurn`, as `<turn>:<type>[:detail]`. */
async function loggedEvents(conversation: Conversation, lastTurn: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of conversation.events({ fromOffset: 0 })) {
    if (event.type === 'textDelta') seen.push(`${event.turn}:text:${event.text}`);
    else if (event.type === 'toolStart' || event.type === 'toolEnd')
      seen.push(`${event.turn}:${event.type}:${event.toolCallId}`);
    else if (event.type === 'messageStart' || event.type === 'messageEnd' || event.type === 'turnEnd')
      seen.push(`${event.turn}:${event.type}`);
    if (event.type === 'turnEnd' && event.turn >= lastTurn) break;
  }
  return seen;
}

describe('model calls as local activities', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [echo, agentTool(researcher)],
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    agent.model.reset();
    agent.model.respond(undefined);
  });

  const startLocal = (): Promise<Conversation> =>
    agent.client.startConversation({
      systemPrompt: 'Be brief.',
      modelPolicy: { localActivity: true, ...FAST_MODEL_RETRY },
    });

  it('runs the calls after the run’s first as local activities, with the same context, replies, tool calls and events, and a history that replays', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'One.' },
      { kind: 'text', text: 'Two.' },
      { kind: 'toolCalls', toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'hi' } }] },
      { kind: 'text', text: 'Three.' },
    );
    const conversation = await startLocal();
    expect(await conversation.send('first')).toMatchObject({ turn: 1, status: 'completed', reply: 'One.' });
    expect(await conversation.send('second')).toMatchObject({ turn: 2, status: 'completed', reply: 'Two.' });
    expect(await conversation.send('third')).toMatchObject({ turn: 3, status: 'completed', reply: 'Three.' });
    // The first call asks the workflow for the context; the three after it read it from the tail.
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 3, activities: 1 });

    // Each local call sent the whole conversation so far, as an activity's does.
    const sent = agent.model.requests.map((request) =>
      request.body.messages.map((message) => `${message.role}:${JSON.stringify(message.content ?? '')}`),
    );
    expect(sent[1]).toEqual(['system:"Be brief."', 'user:"first"', 'assistant:"One."', 'user:"second"']);
    expect(sent[3]?.slice(-3)).toEqual(['user:"third"', 'assistant:""', 'tool:"echo: hi"']);

    const messages = await conversation.messages();
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'toolResult',
      'assistant',
    ]);
    expect(await loggedEvents(conversation, 3)).toEqual([
      '1:messageStart',
      '1:text:One.',
      '1:messageEnd',
      '1:turnEnd',
      '2:messageStart',
      '2:text:Two.',
      '2:messageEnd',
      '2:turnEnd',
      '3:messageStart',
      '3:messageEnd',
      '3:toolStart:e1',
      '3:toolEnd:e1',
      '3:messageStart',
      '3:text:Three.',
      '3:messageEnd',
      '3:turnEnd',
    ]);
    await replayAndRecord(conversation.handle, 'local-model-calls');
  });

  /**
   * Two turns while a follower reads along (polling the log, or on the live channel): the second
   * turn's text as the follower received it, and how its model calls ran.
   */
  const followTwoTurns = async (liveChannel: boolean) => {
    agent.model.enqueue(
      { kind: 'text', text: 'Hello.' },
      { kind: 'text', text: 'A reply that streams in four pieces.', deltaDelayMs: 300 },
    );
    const conversation = await startLocal();
    const deltas: string[] = [];
    let turnsEnded = 0;
    const following = new AbortController();
    const follower = (async () => {
      for await (const event of conversation.events({ signal: following.signal, liveChannel })) {
        if (event.type === 'textDelta' && event.turn === 2) deltas.push(event.text);
        if (event.type === 'turnEnd') turnsEnded += 1;
      }
    })();
    await conversation.send('hi');
    // Once the follower has read the first turn, it is surely following when the next call starts.
    await expect.poll(() => turnsEnded, { timeout: 10_000 }).toBe(1);
    expect(await conversation.send('stream it')).toMatchObject({ turn: 2, status: 'completed' });
    await expect
      .poll(() => deltas.join(''), { timeout: 10_000 })
      .toBe('A reply that streams in four pieces.');
    following.abort();
    await follower;
    return { deltas, calls: await executions(conversation.handle, 'callModel') };
  };

  it('keeps a call followed by polling the log an activity, so that its text streams to the follower as it comes', async () => {
    const { deltas, calls } = await followTwoTurns(false);
    expect(calls).toEqual({ markers: 0, activities: 2 });
    expect(deltas.length).toBeGreaterThan(1);
  });

  it('runs a call followed on the live channel locally, its text streaming there as it comes', async () => {
    const { deltas, calls } = await followTwoTurns(true);
    expect(calls).toEqual({ markers: 1, activities: 1 });
    expect(deltas.length).toBeGreaterThan(1);
  });

  it('runs a call as an activity when its worker lacks the context (a restarted worker), and locally again after it', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'One.' },
      { kind: 'text', text: 'Two.' },
      { kind: 'text', text: 'Three.' },
      { kind: 'text', text: 'Four.' },
    );
    const conversation = await startLocal();
    await conversation.send('first');
    await conversation.send('second');
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 1, activities: 1 });
    await agent.restartWorker();
    expect(await conversation.send('third')).toMatchObject({ turn: 3, status: 'completed', reply: 'Three.' });
    // The local attempt failed at once, before asking the model: a marker, and the call an activity.
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 2, activities: 2 });
    expect(agent.model.requestCount).toBe(3);
    expect(agent.model.lastRequest()?.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'third' });
    expect(await conversation.send('fourth')).toMatchObject({ turn: 4, status: 'completed', reply: 'Four.' });
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 3, activities: 2 });
    expect(await loggedEvents(conversation, 4)).toEqual(
      [1, 2, 3, 4].flatMap((turn) => [
        `${turn}:messageStart`,
        `${turn}:text:${['One.', 'Two.', 'Three.', 'Four.'][turn - 1]}`,
        `${turn}:messageEnd`,
        `${turn}:turnEnd`,
      ]),
    );
    await replayAndRecord(conversation.handle, 'local-model-calls-not-cached');
  });

  it('retries a local call the provider failed, within the same local activity', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'One.' },
      { kind: 'error', status: 500 },
      { kind: 'text', text: 'Recovered.' },
    );
    const conversation = await startLocal();
    await conversation.send('first');
    expect(await conversation.send('second')).toMatchObject({ status: 'completed', reply: 'Recovered.' });
    expect(agent.model.requestCount).toBe(3);
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 1, activities: 1 });
  });

  it('runs a sub-agent’s calls nobody follows as local activities too, its conversation inheriting the option', async () => {
    scriptAgents(agent.model, {
      'Be brief.': (_request, results) =>
        results === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'ask', name: 'researcher', arguments: { task: 'find it' } }],
            }
          : { kind: 'text', text: 'Found.' },
      [researcher.systemPrompt]: (_request, results) =>
        results === 0
          ? { kind: 'toolCalls', toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'fact' } }] }
          : { kind: 'text', text: 'The fact.' },
    });
    const conversation = await startLocal();
    expect(await conversation.send('research')).toMatchObject({ status: 'completed', reply: 'Found.' });
    const [asked] = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(asked?.content).toEqual([{ type: 'text', text: 'The fact.' }]);
    const childId = (asked?.details as { conversationId?: string } | undefined)?.conversationId ?? '';
    // Each conversation's first call is an activity; the one after its tool result, a local activity.
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 1, activities: 1 });
    expect(await executions(agent.client.getConversation(childId).handle, 'callModel')).toEqual({
      markers: 1,
      activities: 1,
    });
  });

  it('takes a message sent and a cancel asked while a local call runs, once the worker extends its workflow task', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'One.' },
      { kind: 'text', text: 'Slow.', delayMs: 2_500 },
      { kind: 'text', text: 'Next.' },
      { kind: 'text', text: 'Never read.', delayMs: 4_000 },
      { kind: 'text', text: 'After the cancel.' },
    );
    const conversation = await startLocal();
    await conversation.send('first');
    const slow = conversation.send('slow');
    await expect.poll(() => agent.model.requestCount, { timeout: 10_000 }).toBe(2);
    const next = conversation.send('next');
    expect(await slow).toMatchObject({ turn: 2, status: 'completed', reply: 'Slow.' });
    expect(await next).toMatchObject({ turn: 3, status: 'completed', reply: 'Next.' });

    const hung = conversation.send('hang');
    await expect.poll(() => agent.model.requestCount, { timeout: 10_000 }).toBe(4);
    expect(await conversation.cancel()).toBe(true);
    expect(await hung).toMatchObject({ turn: 4, status: 'cancelled' });
    expect(await conversation.send('again')).toMatchObject({
      turn: 5,
      status: 'completed',
      reply: 'After the cancel.',
    });
    expect(await executions(conversation.handle, 'callModel')).toEqual({ markers: 4, activities: 1 });
    await replayAndRecord(conversation.handle, 'local-model-calls-message-and-cancel');
  });
});
