import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { ToolError, textResult } from '../../src/contract/toolResult.ts';
import type { ToolExecutionMode } from '../../src/contract/types/conversation.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { scheduledActivities } from '../support/history.ts';

/**
 * Tools declared `batched: true`: the re-runnable calls of one reply that share a task queue and
 * policy run in one `executeTools` activity, in order (sequential mode) or together (parallel
 * mode), each with its own PREPARE, hooks, events, progress and result; calls that need approval
 * or are at-most-once keep an activity each, in their place.
 */

interface Call {
  toolCallId: string;
  idempotencyKey: string;
  attempt: number;
  start: number;
  end: number;
}
const calls: Call[] = [];
const aborted: string[] = [];
const hookCalls: string[] = [];

/** One policy for every batched tool here, so that they share a batch; a short heartbeat timeout lets a cancel arrive fast. */
const POLICY = {
  startToCloseTimeout: '10 seconds',
  heartbeatTimeout: '2 seconds',
  retry: { initialInterval: '50 milliseconds', maximumAttempts: 3 },
};

function napTool(name: string, overrides: Partial<ActivityTool> = {}): ActivityTool {
  return {
    name,
    label: name,
    description: 'Sleeps for ms milliseconds',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    parallelToolExecute: true,
    batched: true,
    policy: POLICY,
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

const tools: ActivityTool[] = [
  napTool('nap'),
  napTool('exclusiveNap', { parallelToolExecute: false }),
  napTool('ownPolicyNap', { policy: { ...POLICY, startToCloseTimeout: '20 seconds' } }),
  napTool('broken', {
    execute: async (toolCallId) => {
      calls.push({ toolCallId, idempotencyKey: '', attempt: currentToolCall().attempt, start: 0, end: 0 });
      throw new ToolError('the disk is full');
    },
  }),
  napTool('flaky', {
    execute: async (toolCallId) => {
      const { idempotencyKey, attempt } = currentToolCall();
      calls.push({ toolCallId, idempotencyKey, attempt, start: Date.now(), end: Date.now() });
      if (attempt === 1) throw new Error('the service blinked');
      return textResult(`${toolCallId} worked on attempt ${attempt}`);
    },
  }),
  napTool('hang', {
    execute: (toolCallId, _args, signal) =>
      new Promise((_resolve, reject) => {
        calls.push({ toolCallId, idempotencyKey: '', attempt: 1, start: Date.now(), end: Number.NaN });
        signal?.addEventListener('abort', () => {
          aborted.push(toolCallId);
          reject(new Error('stopped waiting'));
        });
      }),
  }),
  napTool('approvedNap', { requiresApproval: true }),
  napTool('pay', { atMostOnce: true, batched: false }),
];

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
    if (event.type === 'toolStart' || event.type === 'toolProgress')
      found.push(`${event.type}:${event.toolCallId}#${event.attempt}`);
    if (event.type === 'toolEnd')
      found.push(`toolEnd:${event.toolCallId}#${event.attempt}${event.willRetry ? ' willRetry' : ''}`);
    if (event.type === 'turnEnd') break;
  }
  return found;
}

/** The tool activities of the history, as `<type> <summary>`. */
async function toolActivities(conversation: Conversation): Promise<string[]> {
  return (await scheduledActivities(conversation.handle))
    .filter((activity) => activity.type.startsWith('executeTool'))
    .map((activity) => `${activity.type} ${activity.summary ?? ''}`);
}

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

describe('tools declared batched', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools,
      hooks: {
        beforeToolCall: ({ toolCallId }) => {
          hookCalls.push(`before:${toolCallId}`);
          return undefined;
        },
        afterToolCall: ({ toolCallId, result }) => {
          hookCalls.push(`after:${toolCallId}`);
          if (toolCallId !== 'checked') return undefined;
          return { content: [...result.content, { type: 'text', text: ' (checked)' }] };
        },
      },
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    calls.length = 0;
    aborted.length = 0;
    hookCalls.length = 0;
  });

  async function runReply(
    mode: ToolExecutionMode,
    batch: Array<[id: string, tool: string, ms: number]>,
  ): Promise<{ conversation: Conversation; results: ToolResultMessage[]; actions: number | undefined }> {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: batch.map(([id, name, ms]) => ({ id, name, arguments: { ms } })) },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '', toolExecution: mode });
    const turn = await conversation.send('run them');
    expect(turn).toMatchObject({ status: 'completed', reply: 'done' });
    return { conversation, results: await toolResults(conversation), actions: turn.spend?.actions };
  }

  it('runs a sequential reply’s calls one after another in one activity named after them, with hooks, progress, events and a thrown error', async () => {
    const { conversation, results, actions } = await runReply('sequential', [
      ['first', 'nap', 100],
      ['checked', 'nap', 20],
      ['failing', 'broken', 0],
      ['last', 'nap', 50],
    ]);
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
      ['first', false],
      ['checked', false],
      ['failing', true],
      ['last', false],
    ]);
    expect(results[1]?.content.map((part) => part.text).join('')).toBe('checked slept (checked)');
    expect(results[2]?.content[0]?.text).toContain('the disk is full');
    expect(callOf('checked').start).toBeGreaterThanOrEqual(callOf('first').end);
    expect(callOf('last').start).toBeGreaterThanOrEqual(callOf('checked').end);
    expect(hookCalls).toEqual([
      ...['first', 'checked', 'failing', 'last'].map((id) => `before:${id}`),
      ...['first', 'checked', 'failing', 'last'].map((id) => `after:${id}`),
    ]);
    // The Action meter counts the batch as one activity: the run's start, its look-up of the worker's
    // models, the prompt Update, two model calls, two status upserts and the batch (11 with an
    // activity per call).
    expect(actions).toBe(8);
    // One activity for the four calls, its row naming them in order.
    expect(await toolActivities(conversation)).toEqual([
      'executeTools 4 calls in order: nap(ms: 100); nap(ms: 20); broken(ms: 0); nap(ms: 50)',
    ]);
    // Each call keeps the idempotency key it would have had in an activity of its own.
    expect(callOf('first').idempotencyKey).toBe(`${conversation.id}/tool-1-first`);
    expect(await toolEvents(conversation)).toEqual([
      ...['first', 'checked'].flatMap((id) => [
        `toolStart:${id}#1`,
        `toolProgress:${id}#1`,
        `toolEnd:${id}#1`,
      ]),
      'toolStart:failing#1',
      'toolEnd:failing#1',
      'toolStart:last#1',
      'toolProgress:last#1',
      'toolEnd:last#1',
    ]);
    const ended = agent.events
      .filter((event) => event.type === 'toolExecutionEnd')
      .map((event) => event.toolCallId);
    expect(ended).toEqual(expect.arrayContaining(['first', 'checked', 'failing', 'last']));
    await replayAndRecord(conversation.handle, 'batched-tools-sequential');
  });

  it('runs a parallel reply’s batched calls together in one activity, a parallelToolExecute false one and another policy’s apart, answering in the order asked', async () => {
    const { conversation, results } = await runReply('parallel', [
      ['slow', 'nap', 600],
      ['fast', 'nap', 50],
      ['other', 'ownPolicyNap', 100],
      ['mid', 'nap', 200],
      ['alone', 'exclusiveNap', 100],
      ['after', 'nap', 50],
    ]);
    expect(results.map((result) => result.toolCallId)).toEqual([
      'slow',
      'fast',
      'other',
      'mid',
      'alone',
      'after',
    ]);
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(overlaps(callOf('slow'), callOf('fast'))).toBe(true);
    expect(overlaps(callOf('slow'), callOf('mid'))).toBe(true);
    expect(overlaps(callOf('slow'), callOf('other'))).toBe(true);
    expect(callOf('alone').start).toBeGreaterThanOrEqual(callOf('slow').end);
    expect(callOf('after').start).toBeGreaterThanOrEqual(callOf('alone').end);
    expect((await toolActivities(conversation)).sort()).toEqual(
      [
        'executeTool exclusiveNap(ms: 100)',
        'executeTool nap(ms: 50)',
        'executeTool ownPolicyNap(ms: 100)',
        'executeTools 3 calls together: nap(ms: 600); nap(ms: 50); nap(ms: 200)',
      ].sort(),
    );
    const events = await toolEvents(conversation);
    for (const id of ['slow', 'fast', 'other', 'mid', 'alone', 'after'])
      expect(events.filter((event) => event.endsWith(`:${id}#1`))).toEqual([
        `toolStart:${id}#1`,
        `toolProgress:${id}#1`,
        `toolEnd:${id}#1`,
      ]);
    await replayAndRecord(conversation.handle, 'batched-tools-parallel');
  });

  it('retries the batch from the call that threw, without running the calls it finished before again', async () => {
    const { conversation, results } = await runReply('sequential', [
      ['before', 'nap', 0],
      ['retried', 'flaky', 0],
      ['behind', 'nap', 0],
    ]);
    expect(results.map((result) => result.content[0]?.text)).toEqual([
      'before slept',
      'retried worked on attempt 2',
      'behind slept',
    ]);
    expect(calls.map((call) => `${call.toolCallId}#${call.attempt}`)).toEqual([
      'before#1',
      'retried#1',
      'retried#2',
      'behind#2',
    ]);
    expect(callOf('retried', 2).idempotencyKey).toBe(callOf('retried', 1).idempotencyKey);
    // The resumed attempt tells the finished call's start and end again, so its followers see it.
    expect(await toolEvents(conversation)).toEqual([
      'toolStart:before#1',
      'toolProgress:before#1',
      'toolEnd:before#1',
      'toolStart:retried#1',
      'toolEnd:retried#1 willRetry',
      'toolStart:before#2',
      'toolEnd:before#2',
      'toolStart:retried#2',
      'toolEnd:retried#2',
      'toolStart:behind#2',
      'toolProgress:behind#2',
      'toolEnd:behind#2',
    ]);
  });

  it('lets a parallel batch’s other calls finish when one throws, and runs only that one again', async () => {
    const { results } = await runReply('parallel', [
      ['early', 'nap', 100],
      ['late', 'nap', 300],
      ['retried', 'flaky', 0],
    ]);
    expect(results.map((result) => result.content[0]?.text)).toEqual([
      'early slept',
      'late slept',
      'retried worked on attempt 2',
    ]);
    // "late" ended after the attempt's first heartbeat, within its throttle: the failing attempt's
    // last checkpoint still reached the server, with its failure.
    expect(calls.map((call) => `${call.toolCallId}#${call.attempt}`)).toEqual([
      'retried#1',
      'early#1',
      'late#1',
      'retried#2',
    ]);
  });

  it('cancels the batch’s running call when the turn is cancelled; its calls say so and the next turn runs', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'quick', name: 'nap', arguments: { ms: 0 } },
          { id: 'hung', name: 'hang', arguments: { ms: 0 } },
          { id: 'never', name: 'nap', arguments: { ms: 0 } },
        ],
      },
      { kind: 'text', text: 'Back again.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'sequential',
    });
    const reply = conversation.send('hang');
    await expect.poll(() => calls.map((call) => call.toolCallId), { timeout: 30_000 }).toContain('hung');
    expect(await conversation.cancel()).toBe(true);
    expect(await reply).toMatchObject({ turn: 1, status: 'cancelled' });
    // The cancel reaches the activity on a heartbeat's answer: the hung call's signal aborts.
    await expect.poll(() => aborted, { timeout: 30_000 }).toEqual(['hung']);
    const results = await toolResults(conversation);
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
      ['quick', true],
      ['hung', true],
      ['never', true],
    ]);
    expect(results.every((result) => result.content[0]?.text.includes('cancelled'))).toBe(true);
    expect(calls.map((call) => call.toolCallId)).toEqual(['quick', 'hung']);
    expect(await conversation.send('are you there?')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'Back again.',
    });
  });

  it('interrupts the batch for a message sent with delivery interrupt: its calls say so, the running one is stopped, and the turn goes on', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'quick', name: 'nap', arguments: { ms: 0 } },
          { id: 'hung', name: 'hang', arguments: { ms: 0 } },
        ],
      },
      { kind: 'text', text: 'Stopped.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'sequential',
    });
    const reply = conversation.send('hang');
    await expect.poll(() => calls.map((call) => call.toolCallId), { timeout: 30_000 }).toContain('hung');
    const interrupt = conversation.send('stop', { delivery: 'interrupt' });
    expect(await interrupt).toMatchObject({ turn: 1, status: 'completed', reply: 'Stopped.' });
    expect(await reply).toMatchObject({ turn: 1, status: 'completed', reply: 'Stopped.' });
    await expect.poll(() => aborted, { timeout: 30_000 }).toEqual(['hung']);
    // The workflow receives a batch's results together: the call that had finished inside it reads
    // that it was interrupted too (docs/tools.md, "Cancelling").
    expect(
      (await toolResults(conversation)).map((result) => [result.toolCallId, result.content[0]?.text]),
    ).toEqual([
      ['quick', 'Tool "nap" was interrupted by a new message before it finished; the message follows.'],
      ['hung', 'Tool "hang" was interrupted by a new message before it finished; the message follows.'],
    ]);
  });

  it('keeps an activity each for a call that needs approval and an at-most-once call, in their places in a sequential reply', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'a', name: 'nap', arguments: { ms: 0 } },
          { id: 'b', name: 'nap', arguments: { ms: 0 } },
          { id: 'asks', name: 'approvedNap', arguments: { ms: 0 } },
          { id: 'c', name: 'nap', arguments: { ms: 0 } },
          { id: 'd', name: 'nap', arguments: { ms: 0 } },
          { id: 'paid', name: 'pay', arguments: { ms: 0 } },
          { id: 'e', name: 'nap', arguments: { ms: 0 } },
        ],
      },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'sequential',
    });
    const reply = conversation.send('mixed');
    await expect
      .poll(async () => (await conversation.status()).pendingApprovals.map((a) => a.toolCallId), {
        timeout: 30_000,
      })
      .toEqual(['asks']);
    expect(calls.map((call) => call.toolCallId)).toEqual(['a', 'b']);
    await conversation.approve('asks');
    expect(await reply).toMatchObject({ status: 'completed', reply: 'done' });
    expect(calls.map((call) => call.toolCallId)).toEqual(['a', 'b', 'asks', 'c', 'd', 'paid', 'e']);
    expect((await toolResults(conversation)).map((result) => [result.toolCallId, result.isError])).toEqual(
      ['a', 'b', 'asks', 'c', 'd', 'paid', 'e'].map((id) => [id, false]),
    );
    expect(await toolActivities(conversation)).toEqual([
      'executeTools 2 calls in order: nap(ms: 0); nap(ms: 0)',
      'executeTool approvedNap(ms: 0)',
      'executeTools 2 calls in order: nap(ms: 0); nap(ms: 0)',
      'executeTool pay(ms: 0)',
      'executeTool nap(ms: 0)',
    ]);
    await replayAndRecord(conversation.handle, 'batched-tools-mixed');
  });
});

describe('a worker that batches by default (tools.batchedTools)', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    const { batched: _declared, ...undeclared } = napTool('nap');
    agent = await startTestAgent({
      worker: {
        tools: {
          tools: [undeclared, napTool('single', { batched: false })],
          batchedTools: true,
          builtinTools: false,
        },
      },
    });
  });
  afterAll(async () => agent?.close());

  it('batches the calls of tools that do not say, and not those of a tool that says batched: false', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'a', name: 'nap', arguments: { ms: 0 } },
          { id: 'b', name: 'nap', arguments: { ms: 0 } },
          { id: 'c', name: 'single', arguments: { ms: 0 } },
          { id: 'd', name: 'single', arguments: { ms: 0 } },
        ],
      },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'sequential',
    });
    expect(await conversation.send('go')).toMatchObject({ status: 'completed', reply: 'done' });
    expect(await toolActivities(conversation)).toEqual([
      'executeTools 2 calls in order: nap(ms: 0); nap(ms: 0)',
      'executeTool single(ms: 0)',
      'executeTool single(ms: 0)',
    ]);
  });
});
