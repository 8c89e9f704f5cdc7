import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import {
  collectTurn,
  SURVEY_REPLY,
  SURVEY_TURN_EVENTS,
  scriptSurveyTurn,
  surveyTool,
  updatesAndSignals,
  userView,
} from '../support/surveyTurn.ts';

const survey = surveyTool('survey');

describe('live channel: followers read events from the payload store, not by polling the conversation', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [survey.tool] });
  });
  afterAll(async () => agent?.close());

  const script = (ms: number) => scriptSurveyTurn(agent.model, ms);

  it('streams a followed tool turn with no Update or signal but the prompt, text before the model has finished, each event once', async () => {
    script(1_000);
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const following = collectTurn(conversation);
    await sleep(500);
    expect(await conversation.send('How many answered?')).toMatchObject({
      status: 'completed',
      reply: SURVEY_REPLY,
    });
    const seen = await following;

    expect(await updatesAndSignals(conversation)).toEqual(['prompt']);
    const lastPieceSentAt = agent.model.lastRequest()?.textSentAt.at(-1) ?? 0;
    const firstText = seen.find(({ event }) => event.type === 'textDelta');
    expect(firstText?.event.live).toBe(true);
    expect(firstText?.at).toBeLessThan(lastPieceSentAt);
    const live = userView(seen);
    expect(live.types).toEqual(SURVEY_TURN_EVENTS);
    expect(live.text).toBe(SURVEY_REPLY);
    expect(live.progress).toBe(4);
    // The same turn as the log has it, read afterwards by polling.
    const logged = userView(await collectTurn(conversation, { liveChannel: false }));
    expect(logged).toEqual(live);
    // Offsets go on from the log's: a live item's is where the log's next event goes.
    const lastOffset = seen.at(-1)?.event.offset ?? -1;
    expect(lastOffset).toBe((await conversation.eventOffset()) - 1);
  });

  it('shows a follower who attaches during a long tool its progress while the tool runs, with no signal', async () => {
    script(4_000);
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const runs = survey.started;
    const turn = conversation.send('How many answered?');
    while (survey.started === runs) await sleep(50);
    await sleep(1_000);
    const seen = await collectTurn(conversation);
    expect(await turn).toMatchObject({ status: 'completed', reply: SURVEY_REPLY });

    const progress = seen.filter(({ event }) => event.type === 'toolProgress');
    expect(progress).toHaveLength(16);
    expect(progress.at(-2)?.at).toBeLessThan(survey.finishedAt[runs] ?? 0);
    expect(userView(seen).types).toEqual(SURVEY_TURN_EVENTS);
    expect(await updatesAndSignals(conversation)).toEqual(['prompt']);
  });

  it('follows from where the log ends into the next turn, from its start', async () => {
    script(250);
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.send('How many answered?');
    const { eventOffset } = await conversation.statusAndOffset();
    script(250);
    const following = collectTurn(conversation, { fromOffset: eventOffset });
    await sleep(300);
    await conversation.send('And now?');
    const seen = (await following).map(({ event }) => event);
    expect(seen[0]).toMatchObject({ type: 'turnStart', turn: 2, offset: eventOffset });
    expect(seen.filter((event) => event.turn !== 2)).toEqual([]);
    expect(await updatesAndSignals(conversation)).toEqual(['prompt', 'prompt']);
  });

  it('shows a second follower who comes during a call the call from its start, and neither sees an event twice', async () => {
    script(3_000);
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const first = collectTurn(conversation);
    await sleep(500);
    const runs = survey.started;
    const turn = conversation.send('How many answered?');
    while (survey.started === runs) await sleep(50);
    await sleep(1_000);
    const second = collectTurn(conversation);
    await turn;
    for (const seen of [await first, await second]) {
      const view = userView(seen);
      expect(view).toEqual({ types: SURVEY_TURN_EVENTS, progress: 12, text: SURVEY_REPLY });
      // Each saw the running tool's progress live, while it ran, not only with its result. (How many
      // pieces came live depends on when the follower attached, which load moves.)
      const finishedAt = survey.finishedAt[runs] ?? 0;
      expect(
        seen.some(({ event, at }) => event.type === 'toolProgress' && event.live && at < finishedAt),
      ).toBe(true);
    }
    expect(await updatesAndSignals(conversation)).toEqual(['prompt']);
  });

  it('keeps offsets going across runs, and resumes after a live event without losing one', async () => {
    agent.model.enqueue(
      { kind: 'text', text: 'one', deltaDelayMs: 0 },
      { kind: 'text', text: 'two pieces of text', deltaDelayMs: 300 },
      { kind: 'text', text: 'three' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxTurnsPerRun: 1 });
    const firstRun = (await conversation.handle.describe()).runId;
    const seen: ConversationEventItem[] = [];
    const following = (async () => {
      for await (const event of conversation.events({ fromOffset: 0 })) {
        seen.push(event);
        if (event.type === 'turnEnd' && event.turn === 3) break;
      }
    })();
    await sleep(300);
    for (const text of ['a', 'b', 'c']) await conversation.send(text);
    await following;

    expect((await conversation.handle.describe()).runId).not.toBe(firstRun);
    // Offsets go on across runs; a live event has the offset of the log's event before it, and the
    // log's copy of it is not yielded again.
    const offsets = seen.map((event) => event.offset);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    const logged = seen.filter((event) => !event.live).map((event) => event.offset);
    expect(new Set(logged).size).toBe(logged.length);
    expect(offsets.at(-1)).toBe((await conversation.eventOffset()) - 1);
    const replies = seen.flatMap((event) => (event.type === 'turnEnd' ? [event.result.reply] : []));
    expect(replies).toEqual(['one', 'two pieces of text', 'three']);
    // Each live event's offset is the log's event before it: resuming after it misses nothing.
    const live = seen.find((event) => event.live);
    expect(live).toBeDefined();
    const resumed: ConversationEventItem[] = [];
    for await (const event of conversation.events({
      fromOffset: (live?.offset ?? 0) + 1,
      liveChannel: false,
    })) {
      resumed.push(event);
      if (event.type === 'turnEnd' && event.turn === 3) break;
    }
    expect(resumed[0]?.offset).toBe((live?.offset ?? 0) + 1);
    expect(resumed.map((event) => event.type)).toContain('turnEnd');
  });

  it('polls the log when the client uses another payload store than the workers', async () => {
    const otherStore = await mkdtemp(path.join(os.tmpdir(), 'yiem-other-store-'));
    const client = new AgentClient({
      address: agent.address,
      taskQueue: agent.taskQueue,
      dataConverter: dataConverterFromEnv({ ...process.env, YIEM_PAYLOADS_DIR: otherStore }),
    });
    try {
      script(1_000);
      const conversation = await client.startConversation({ systemPrompt: '' });
      const following = collectTurn(conversation);
      await sleep(500);
      await conversation.send('How many answered?');
      const view = userView(await following);
      expect(view).toMatchObject({ types: SURVEY_TURN_EVENTS, text: SURVEY_REPLY });
      expect(await updatesAndSignals(conversation)).toContain('__temporal_workflow_stream_poll');
    } finally {
      await client.close();
    }
  });
});
