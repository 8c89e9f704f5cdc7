import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { compactionsQuery } from '../../src/contract/definitions.ts';
import type { ConversationEvent } from '../../src/contract/types/events.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { yiemWithInput as yiem } from '../support/cli.ts';
import {
  answer,
  compactedConversation,
  isCompaction,
  systemText,
  WINDOW_BYTES,
} from '../support/compactionScenario.ts';
import { tokenReservationRecorded } from '../support/history.ts';
import { closedPort } from '../support/ports.ts';

const TURNS = 40;
/** Over 4 KB: the workflow keeps it in the payload store, by reference. */
const LONG_SUMMARY = `a long summary ${'s'.repeat(6_000)}`;

/** Runs the yiem CLI from the sources with `input` on its stdin; resolves with its output. */

describe('compaction', () => {
  let agent: TestAgent;
  let custom: TestAgent;
  beforeAll(async () => {
    [agent, custom] = await Promise.all([
      startTestAgent({ maxContextBytes: WINDOW_BYTES }),
      startTestAgent({
        worker: {
          compaction: {
            compact: (messages, context) =>
              messages.some((message) => message.content === 'long')
                ? LONG_SUMMARY
                : `custom: ${messages.length} messages, the last "${String(messages.at(-1)?.content)}"; before: ${context.previousSummary ?? 'nothing'}`,
          },
        },
      }),
    ]);
    agent.model.respond(answer);
    custom.model.respond(answer);
  });
  afterAll(async () => Promise.all([agent?.close(), custom?.close()]));

  it(`compacts a ${TURNS}-turn conversation again and again: the model sees the summary and the recent turns, the transcript stays whole (300 turns: test/system)`, async () => {
    await compactedConversation(agent, TURNS);
  });

  it('compacts when asked, and the next model call sends the summary', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: { keepRecentTurns: 2 },
    });
    await conversation.send('q1');
    expect(await conversation.compact()).toBeNull();
    for (let turn = 2; turn <= 5; turn++) await conversation.send(`q${turn}`);

    const compaction = await conversation.compact();
    expect(compaction).toMatchObject({
      id: 1,
      trigger: 'request',
      from: 0,
      upTo: 6,
      turn: 5,
      summary: 'summary through q3',
    });
    expect(await conversation.compactions()).toEqual([compaction]);
    // A worker that did not write the summary reads it from the conversation.
    await agent.restartWorker();
    await conversation.send('q6');
    const request = agent.model.lastRequest();
    expect(systemText(request)).toContain('<summary>\nsummary through q3\n</summary>');
    expect(request?.body.messages.slice(1).map((message) => message.content)).toEqual([
      'q4',
      'a4',
      'q5',
      'a5',
      'q6',
    ]);
    expect(await conversation.messages()).toHaveLength(12);
  });

  it('compacts from the chat (/compact) and from the command line (yiem compact)', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: { keepRecentTurns: 1 },
    });
    for (let turn = 1; turn <= 3; turn++) await conversation.send(`q${turn}`);
    const connection = ['--address', agent.address, '--task-queue', agent.taskQueue];
    const chat = await yiem(['chat', '--id', conversation.id, ...connection], '/compact\n/exit\n');
    expect(chat.stdout).toContain(
      'Compaction 1 (asked for, turn 3, scripted): messages 1–4 folded into the summary; the model now sees it and the messages from 5 on.\nsummary through q2',
    );
    const again = await yiem(['compact', conversation.id, ...connection]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain('Nothing to compact');
  });

  it('refuses a compaction request for a conversation with compaction: false', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: false,
    });
    await expect(conversation.compact()).rejects.toThrow(/compaction: false/);
  });

  it("writes the summary with the worker's own compaction function", async () => {
    const conversation = await custom.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: { keepRecentTurns: 1 },
    });
    for (let turn = 1; turn <= 3; turn++) await conversation.send(`q${turn}`);
    expect(await conversation.compact()).toMatchObject({
      from: 0,
      upTo: 4,
      model: 'custom',
      summary: 'custom: 4 messages, the last "a2"; before: nothing',
    });
    await conversation.send('q4');
    expect(await conversation.compact()).toMatchObject({
      from: 4,
      upTo: 6,
      summary:
        'custom: 2 messages, the last "a3"; before: custom: 4 messages, the last "a2"; before: nothing',
    });
    expect(custom.model.requests.filter(isCompaction)).toEqual([]);
    expect(systemText(custom.model.lastRequest())).toContain('custom: 4 messages');
  });

  it('keeps a large summary in the payload store and still shows it whole, to the client and the model', async () => {
    const conversation = await custom.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: { keepRecentTurns: 1 },
    });
    await conversation.send('long');
    await conversation.send('q2');
    expect(await conversation.compact()).toMatchObject({ upTo: 2, summary: LONG_SUMMARY });
    expect((await conversation.compactions())[0]?.summary).toBe(LONG_SUMMARY);
    const [kept] = await conversation.handle.query(compactionsQuery);
    expect(kept).toMatchObject({ summary: '', stored: { bytes: expect.any(Number) } });
    await conversation.send('q3');
    expect(systemText(custom.model.lastRequest())).toContain(`<summary>\n${LONG_SUMMARY}\n</summary>`);
  });
});

/** How the conversation's history scheduled its (first) compaction: its activity id, task queue, priority. */
async function scheduledCompaction(conversation: Conversation) {
  const history = (await conversation.handle.fetchHistory()).events ?? [];
  return history
    .map((event) => event.activityTaskScheduledEventAttributes)
    .find((attributes) => attributes?.activityType?.name === 'compactContext');
}

/** The conversation's events up to and including its first `compaction` event. */
async function eventsToCompaction(conversation: Conversation): Promise<ConversationEvent[]> {
  const events: ConversationEvent[] = [];
  for await (const event of conversation.events({ fromOffset: 0 })) {
    events.push(event);
    if (event.type === 'compaction') break;
  }
  return events;
}

describe("a compaction's model call is held to its model's rules, as the turn's calls are", () => {
  let limited: ScriptedModel;
  let backup: ScriptedModel;
  let agent: TestAgent;
  beforeAll(async () => {
    [limited, backup] = await Promise.all([
      startScriptedModel({ respond: answer }),
      startScriptedModel({ respond: answer }),
    ]);
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            limited: {
              baseURL: limited.baseURL,
              rateLimit: { requestsPerMinute: 6_000, tokensPerMinute: 100_000 },
            },
            down: { baseURL: `http://127.0.0.1:${await closedPort()}/v1`, timeoutMs: 2_000 },
            backup: { baseURL: backup.baseURL },
          },
          defaultModel: 'limited',
          fallbacks: { down: ['backup'] },
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await limited?.close();
    await backup?.close();
  });

  it("waits in the rate-limited model's task queue and counts in its token window", async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: { keepRecentTurns: 1 },
    });
    for (let turn = 1; turn <= 3; turn++) await conversation.send(`q${turn}`);
    expect(await conversation.compact()).toMatchObject({
      upTo: 4,
      model: 'limited',
      summary: 'summary through q2',
    });
    expect(limited.requests.filter(isCompaction)).toHaveLength(1);

    const compaction = await scheduledCompaction(conversation);
    expect(compaction?.taskQueue?.name).toBe(`${agent.taskQueue}-model-limited`);
    // Shared fairly between conversations, as the turn's calls are.
    expect(compaction?.priority?.fairnessKey).toBe(conversation.id);

    // The limiter workflow of the model reserved the compaction's request, by its activity id.
    expect(
      await tokenReservationRecorded(
        agent.client.client,
        agent.taskQueue,
        'limited',
        conversation.handle,
        compaction?.activityId,
      ),
    ).toBe(true);
  });

  it('goes on to the fallback when its model cannot answer, and the event log says so', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      model: 'backup',
      compaction: { keepRecentTurns: 1, model: 'down' },
    });
    for (let turn = 1; turn <= 3; turn++) await conversation.send(`q${turn}`);
    expect(await conversation.compact()).toMatchObject({
      upTo: 4,
      model: 'backup',
      summary: 'summary through q2',
    });
    const events = await eventsToCompaction(conversation);
    expect(events.filter((event) => event.type === 'modelFallback')).toMatchObject([
      { turn: 3, from: 'down', to: 'backup', cause: expect.stringContaining('ECONNREFUSED') },
    ]);
    // An unlimited model's compaction runs on the conversation's own queue.
    expect((await scheduledCompaction(conversation))?.taskQueue?.name).toBe(agent.taskQueue);
  });
});
