import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { activityGate } from '../support/activityGate.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

/** Calls that started, and calls whose `signal` aborted and that cleaned up. */
let started: string[] = [];
let cleanedUp: string[] = [];

const wait: AgentTool = {
  name: 'wait',
  label: 'Wait',
  description: 'Waits until cancelled',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  // Cancellation reaches a running tool through its heartbeats.
  policy: { heartbeatTimeout: '1 second' },
  execute: (toolCallId, _args, signal) => {
    started.push(toolCallId);
    return new Promise((_resolve, reject) => {
      signal?.addEventListener('abort', () => {
        cleanedUp.push(toolCallId);
        reject(new Error('stopped waiting'));
      });
    });
  },
};

const quick: AgentTool = {
  name: 'quick',
  label: 'Quick',
  description: 'Answers at once',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: false,
  execute: () => textResult('quick result'),
};

/** Holds the lookup of the worker's models, which starts a run's first turn. */
const modelLookup = activityGate('modelRouting');

describe('cancelling a running turn', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [wait, quick],
      // A model call outlives the slowest start of `yiem cancel` from sources on a loaded machine:
      // with the harness's 5 s, the call timed out and its retry finished the turn before the CLI ran.
      modelTimeoutMs: 60_000,
      worker: { worker: { options: { interceptors: { activity: [modelLookup.interceptor] } } } },
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    started = [];
    cleanedUp = [];
    agent.model.reset();
  });

  it('stops running tools, answers every call in order, and takes the next message', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_quick', name: 'quick', arguments: {} },
          { id: 'call_wait_a', name: 'wait', arguments: {} },
          { id: 'call_wait_b', name: 'wait', arguments: {} },
          { id: 'call_after', name: 'quick', arguments: {} },
        ],
      },
      { kind: 'text', text: 'Back again.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      toolExecution: 'parallel',
    });
    const reply = conversation.send('start waiting');
    await expect.poll(() => started.length).toBe(2);

    expect(await conversation.cancel()).toBe(true);
    expect(await reply).toMatchObject({ turn: 1, status: 'cancelled' });
    await expect.poll(() => [...cleanedUp].sort()).toEqual(['call_wait_a', 'call_wait_b']);
    // Each cancelled call's start gets its end, and it is not retried.
    const ends = () =>
      agent.events
        .flatMap((e) => (e.type === 'toolExecutionEnd' && e.toolCallId.startsWith('call_wait') ? [e] : []))
        .map((e) => `${e.toolCallId} isError=${e.isError} willRetry=${e.willRetry}`)
        .sort();
    await expect
      .poll(ends)
      .toEqual(['call_wait_a isError=true willRetry=false', 'call_wait_b isError=true willRetry=false']);

    const messages = await conversation.messages();
    const results = messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
      ['call_quick', false],
      ['call_wait_a', true],
      ['call_wait_b', true],
      ['call_after', true],
    ]);
    expect(results[1]?.content[0]?.text).toContain('cancelled');

    expect(await conversation.send('are you there?')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'Back again.',
    });
    // The provider saw an answer to every call it had made.
    const sent = agent.model.lastRequest()?.body.messages.map((message) => message.role);
    expect(sent).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'user']);
    expect(await conversation.cancel()).toBe(false);
    await replayAndRecord(conversation.handle, 'cancel-during-tools');
  });

  it('cancels a turn waiting on the model, and `yiem cancel` does it from the shell', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'too late', delayMs: 30_000 },
      { kind: 'text', text: 'On time.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const reply = conversation.send('think hard');
    await expect.poll(() => agent.model.requestCount).toBe(1);

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        ...YIEM_FROM_SOURCES,
        'cancel',
        conversation.id,
        '--address',
        agent.address,
        '--task-queue',
        agent.taskQueue,
      ],
      { env: { ...process.env, TEMPORAL_ADDRESS: '', YIEM_TASK_QUEUE: '' } },
    );
    expect(stdout).toContain(`Cancelled the running turn of ${conversation.id}`);
    expect(await reply).toMatchObject({ turn: 1, status: 'cancelled' });
    expect((await conversation.messages()).map((message) => message.role)).toEqual(['user']);

    expect(await conversation.send('again')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'On time.',
    });
    await replayAndRecord(conversation.handle, 'cancel-during-model-call');
  });

  it('cancels a turn still asking for the default model: its message does not run', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Should not be said.' }, { kind: 'text', text: 'Next.' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    modelLookup.close();
    const reply = conversation.send('never mind');
    try {
      await modelLookup.reached();
      expect(await conversation.cancel()).toBe(true);
    } finally {
      modelLookup.release();
    }
    expect(await reply).toMatchObject({ turn: 1, status: 'cancelled' });
    expect(agent.model.requestCount).toBe(0);
    expect((await conversation.messages()).map((message) => message.role)).toEqual(['user']);
    expect(await conversation.status()).toMatchObject({ state: 'idle', pendingMessages: 0 });
    expect(await conversation.send('and now?')).toMatchObject({ turn: 2, reply: 'Should not be said.' });
  });
});
