import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolExecutionMode } from '../../src/contract/types/conversation.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { executions } from '../support/history.ts';

/**
 * Tools declared `localActivity: true` run each call as a Temporal local activity in the workflow
 * task that asked for it: the history has a `LocalActivity` marker per call instead of an
 * `executeTool` activity, the calls keep the modes' order and concurrency, retries and events, and
 * the history replays.
 */

interface Call {
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
  start: number;
  end: number;
}
const calls: Call[] = [];

function napTool(name: string, overrides: Partial<ActivityTool> = {}): ActivityTool {
  return {
    name,
    label: name,
    description: 'Sleeps for ms milliseconds',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    parallelToolExecute: true,
    localActivity: true,
    policy: { startToCloseTimeout: '10 seconds', retry: { initialInterval: '50 milliseconds' } },
    execute: async (toolCallId, args, _signal, onPartialResult) => {
      const { idempotencyKey, attempt } = currentToolCall();
      const start = Date.now();
      onPartialResult({ sleeping: args.ms });
      await sleep(Number(args.ms));
      calls.push({ toolCallId, idempotencyKey, attempt, start, end: Date.now() });
      return textResult(`${toolCallId} slept`);
    },
    ...overrides,
  };
}

/** Fails for good: its one attempt throws, and the model reads the error as the call's result. */
const broken = napTool('broken', {
  policy: { retry: { maximumAttempts: 1 } },
  execute: async () => {
    throw new Error('the disk is full');
  },
});

/** Waits until its call is cancelled: a hung call that only the turn's cancellation ends. */
const hang = napTool('hang', {
  execute: (toolCallId, _args, signal) =>
    new Promise((_resolve, reject) => {
      calls.push({ toolCallId, idempotencyKey: '', attempt: 1, start: Date.now(), end: Number.NaN });
      signal?.addEventListener('abort', () => {
        aborted.push(toolCallId);
        reject(new Error('stopped waiting'));
      });
    }),
});
const aborted: string[] = [];

/** Fails its first attempt of every call: the local activity's retry runs it again. */
const flaky = napTool('flaky', {
  execute: async (toolCallId) => {
    const { idempotencyKey, attempt } = currentToolCall();
    calls.push({ toolCallId, idempotencyKey, attempt, start: Date.now(), end: Date.now() });
    if (attempt === 1) throw new Error('the service blinked');
    return textResult(`${toolCallId} worked on attempt ${attempt}`);
  },
});

const overlaps = (a: Call, b: Call): boolean => a.start < b.end && b.start < a.end;
const callOf = (id: string, attempt = 1): Call => {
  const found = calls.find((call) => call.toolCallId === id && call.attempt === attempt);
  if (!found) throw new Error(`${id} did not run attempt ${attempt}`);
  return found;
};

/** The tool events of the conversation's log, as `<type>:<call>#<attempt>`. */
async function toolEvents(conversation: Conversation): Promise<string[]> {
  const found: string[] = [];
  for await (const event of conversation.events({ fromOffset: 0 })) {
    if (event.type === 'toolStart') found.push(`toolStart:${event.toolCallId}#${event.attempt}`);
    if (event.type === 'toolEnd')
      found.push(`toolEnd:${event.toolCallId}#${event.attempt}${event.willRetry ? ' willRetry' : ''}`);
    if (event.type === 'turnEnd') break;
  }
  return found;
}

describe('tools declared localActivity', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [
        napTool('nap'),
        napTool('exclusiveNap', { parallelToolExecute: false }),
        napTool('ordinaryNap', { localActivity: false }),
        flaky,
        hang,
        broken,
        { ...broken, name: 'brokenActivity', localActivity: false },
      ],
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    calls.length = 0;
  });

  async function runBatch(
    mode: ToolExecutionMode,
    batch: Array<[id: string, tool: string, ms: number]>,
  ): Promise<{ conversation: Conversation; results: ToolResultMessage[] }> {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: batch.map(([id, name, ms]) => ({ id, name, arguments: { ms } })) },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '', toolExecution: mode });
    const turn = await conversation.send('run them');
    expect(turn).toMatchObject({ status: 'completed', reply: 'done' });
    const messages = await conversation.messages();
    return { conversation, results: messages.filter((m): m is ToolResultMessage => m.role === 'toolResult') };
  }

  it('runs sequential calls one after another as local activities, with results, events and a history that replays', async () => {
    const { conversation, results } = await runBatch('sequential', [
      ['first', 'nap', 100],
      ['second', 'nap', 20],
      ['third', 'nap', 50],
    ]);
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
      ['first', false],
      ['second', false],
      ['third', false],
    ]);
    expect(results[1]?.content).toEqual([{ type: 'text', text: 'second slept' }]);
    expect(callOf('second').start).toBeGreaterThanOrEqual(callOf('first').end);
    expect(callOf('third').start).toBeGreaterThanOrEqual(callOf('second').end);
    expect(await executions(conversation.handle, 'executeTool')).toEqual({ markers: 3, activities: 0 });

    // Each call has its own idempotency key, made from the workflow's ID for it as an activity's is.
    const keys = calls.map((call) => call.idempotencyKey);
    expect(keys).toEqual([
      `${conversation.id}/tool-1-first`,
      `${conversation.id}/tool-1-second`,
      `${conversation.id}/tool-1-third`,
    ]);

    // The calls' events travel with their results into the conversation's log.
    const types: string[] = [];
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolStart' || event.type === 'toolProgress' || event.type === 'toolEnd')
        types.push(`${event.type}:${event.toolCallId}`);
      if (event.type === 'turnEnd') break;
    }
    expect(types).toEqual(
      ['first', 'second', 'third'].flatMap((id) => [
        `toolStart:${id}`,
        `toolProgress:${id}`,
        `toolEnd:${id}`,
      ]),
    );
    await replayAndRecord(conversation.handle, 'local-tool-calls');
  });

  it('starts parallel calls together, with an ordinary one in their group, runs a parallelToolExecute false one alone, and answers in the order asked', async () => {
    const { conversation, results } = await runBatch('parallel', [
      ['slow', 'nap', 600],
      ['fast', 'nap', 50],
      ['ordinary', 'ordinaryNap', 100],
      ['alone', 'exclusiveNap', 100],
      ['after', 'nap', 50],
    ]);
    expect(results.map((result) => result.toolCallId)).toEqual([
      'slow',
      'fast',
      'ordinary',
      'alone',
      'after',
    ]);
    expect(overlaps(callOf('slow'), callOf('fast'))).toBe(true);
    // The ordinary call's activity is scheduled when the workflow task completes, once the local
    // calls of its group have ended (or the task is extended): it ran, and in its place in the order.
    expect(callOf('ordinary').end).toBeLessThanOrEqual(callOf('alone').start);
    expect(callOf('fast').end).toBeLessThan(callOf('slow').end);
    expect(callOf('alone').start).toBeGreaterThanOrEqual(callOf('slow').end);
    expect(callOf('after').start).toBeGreaterThanOrEqual(callOf('alone').end);
    expect(await executions(conversation.handle, 'executeTool')).toEqual({ markers: 4, activities: 1 });
    // Markers recorded in the order the calls ended, not the order they started, around an activity.
    await replayAndRecord(conversation.handle, 'local-tool-calls-parallel');
  });

  it('cancels a hung call when its turn is cancelled, though the workflow task holds the cancel until it next completes', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'hung', name: 'hang', arguments: { ms: 0 } }] },
      { kind: 'text', text: 'Back again.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('hang');
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(1);
    expect(await conversation.cancel()).toBe(true);
    expect(await reply).toMatchObject({ turn: 1, status: 'cancelled' });
    expect(aborted).toEqual(['hung']);
    const [result] = (await conversation.messages()).filter(
      (m): m is ToolResultMessage => m.role === 'toolResult',
    );
    expect(result).toMatchObject({ toolCallId: 'hung', isError: true });
    expect(result?.content[0]?.text).toContain('cancelled');
    expect(await conversation.send('are you there?')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'Back again.',
    });
  });

  it('retries a call whose attempt threw, with the same idempotency key, its attempts in order in the log', async () => {
    const { conversation, results } = await runBatch('sequential', [['retried', 'flaky', 0]]);
    expect(results[0]?.content).toEqual([{ type: 'text', text: 'retried worked on attempt 2' }]);
    expect(results[0]?.isError).toBe(false);
    expect(callOf('retried', 2).idempotencyKey).toBe(callOf('retried', 1).idempotencyKey);
    expect(await executions(conversation.handle, 'executeTool')).toEqual({ markers: 1, activities: 0 });
    // The failed attempt's events ride with the next attempt's result, ahead of them.
    expect(await toolEvents(conversation)).toEqual([
      'toolStart:retried#1',
      'toolEnd:retried#1 willRetry',
      'toolStart:retried#2',
      'toolEnd:retried#2',
    ]);
  });

  it('gives the model a failed call’s error as an activity’s would be, its events in the log', async () => {
    const { conversation, results } = await runBatch('sequential', [
      ['local', 'broken', 0],
      ['ordinary', 'brokenActivity', 0],
    ]);
    expect(results.map((result) => result.isError)).toEqual([true, true]);
    expect(results.map((result) => result.content)).toEqual([
      [{ type: 'text', text: 'Tool "broken" failed: the disk is full' }],
      [{ type: 'text', text: 'Tool "brokenActivity" failed: the disk is full' }],
    ]);
    expect(await toolEvents(conversation)).toEqual([
      'toolStart:local#1',
      'toolEnd:local#1',
      'toolStart:ordinary#1',
      'toolEnd:ordinary#1',
    ]);
  });

  it('gives a follower the events of a call longer than half a second with its result, before the reply', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'Following.' },
      { kind: 'toolCalls', toolCalls: [{ id: 'long', name: 'nap', arguments: { ms: 800 } }] },
      { kind: 'text', text: 'Slept.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const seen: string[] = [];
    const following = new AbortController();
    const follower = (async () => {
      for await (const event of conversation.events({ signal: following.signal })) {
        seen.push(
          event.type === 'toolStart' || event.type === 'toolEnd'
            ? `${event.type}:${event.toolCallId}`
            : event.type,
        );
      }
    })();
    // By the end of a first turn the follower's poll waits in the workflow: the next call is followed.
    await conversation.send('follow me');
    await expect.poll(() => seen.filter((type) => type === 'turnEnd').length, { timeout: 10_000 }).toBe(1);
    await conversation.send('sleep');
    await expect.poll(() => seen.filter((type) => type === 'turnEnd').length, { timeout: 10_000 }).toBe(2);
    following.abort();
    await follower;
    const secondTurn = seen.slice(seen.indexOf('turnEnd') + 1);
    const at = (type: string) => secondTurn.indexOf(type);
    expect(at('toolStart:long')).toBeGreaterThanOrEqual(0);
    expect(at('toolEnd:long')).toBeGreaterThan(at('toolStart:long'));
    expect(at('textDelta')).toBeGreaterThan(at('toolEnd:long'));
  });
});
