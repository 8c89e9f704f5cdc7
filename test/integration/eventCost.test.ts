import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import {
  collectTurn,
  SURVEY_REPLY,
  SURVEY_TURN_EVENTS,
  scriptSurveyTurn,
  surveyTool,
  userView,
} from '../support/surveyTurn.ts';

/** Reports progress for a second (`ms: 1000`): longer than an attempt may hold its events back when followed. */
const survey = surveyTool('survey');
/** Runs for `ms` and reports progress every 250 ms: long enough for an attempt to look for followers. */
const longSurvey = surveyTool('longSurvey');
/** Longer than an unfollowed attempt waits before it first looks for a follower (5 s). */
const LONG_SURVEY_MS = 8_000;

/** The live stream's signals in the conversation's history: each one a billed Action. */
async function publishSignals(conversation: Conversation): Promise<number> {
  const history = await conversation.handle.fetchHistory();
  return (history.events ?? []).filter(
    (event) =>
      event.workflowExecutionSignaledEventAttributes?.signalName === '__temporal_workflow_stream_publish',
  ).length;
}

/** Every event of the first turn, from offset 0, with when it arrived, polled from the log. */
const pollTurn = (conversation: Conversation) => collectTurn(conversation, { liveChannel: false });

describe('event stream cost: nobody pays for live events nobody reads', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [survey.tool, longSurvey.tool] });
  });
  afterAll(async () => agent?.close());

  const script = () => scriptSurveyTurn(agent.model, 1_000);

  /**
   * One turn nobody follows: it completes without a live signal, and read afterwards from the log it
   * has its `progressCount` progress events and every other event of the turn.
   */
  const expectUnfollowedTurn = async (progressCount: number) => {
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('How many answered?')).toMatchObject({
      status: 'completed',
      reply: SURVEY_REPLY,
    });
    expect(await publishSignals(conversation)).toBe(0);

    const view = userView(await pollTurn(conversation));
    expect(view.progress).toBe(progressCount);
    expect(view.types).toEqual(SURVEY_TURN_EVENTS);
    return view;
  };

  it('sends no signal for a streamed reply and a long tool when nobody follows, and the log still has every event', async () => {
    script();
    const view = await expectUnfollowedTurn(4);
    expect(view.text).toBe(SURVEY_REPLY);
  });

  it('streams the same events live to a follower, text before the model has finished', async () => {
    script();
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const following = pollTurn(conversation);
    // The follower's first poll is waiting before the prompt arrives, as in `yiem chat`.
    await sleep(500);
    expect(await conversation.send('How many answered?')).toMatchObject({
      status: 'completed',
      reply: SURVEY_REPLY,
    });
    const seen = await following;
    expect(await publishSignals(conversation)).toBeGreaterThan(0);

    const lastPieceSentAt = agent.model.lastRequest()?.textSentAt.at(-1) ?? 0;
    const firstText = seen.find(({ event }) => event.type === 'textDelta');
    expect(firstText?.at).toBeLessThan(lastPieceSentAt);
    const view = userView(seen);
    expect(view.progress).toBeGreaterThan(0);
    expect(view.types).toEqual(SURVEY_TURN_EVENTS);
    expect(view.text).toBe(SURVEY_REPLY);
  });

  const scriptLong = () =>
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'longSurvey', arguments: { ms: LONG_SURVEY_MS } }] },
      { kind: 'text', text: SURVEY_REPLY },
    );
  const progressCount = LONG_SURVEY_MS / 250;

  it('sends no signal for a tool that runs for seconds when nobody follows, and its progress is all in the log', async () => {
    scriptLong();
    await expectUnfollowedTurn(progressCount);
  });

  it('shows a follower who attaches during such a tool its progress while the tool still runs', async () => {
    scriptLong();
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const runs = longSurvey.started;
    const turn = conversation.send('How many answered?');
    // Attach once the tool runs unfollowed, as `yiem chat` opened mid-call would.
    while (longSurvey.started === runs) await sleep(50);
    await sleep(500);
    const seen = await pollTurn(conversation);
    expect(await turn).toMatchObject({ status: 'completed', reply: SURVEY_REPLY });

    const toolFinishedAt = longSurvey.finishedAt[runs] ?? 0;
    const progress = seen.filter(({ event }) => event.type === 'toolProgress');
    expect(progress).toHaveLength(progressCount);
    expect(progress[0]?.at).toBeLessThan(toolFinishedAt);
    expect(await publishSignals(conversation)).toBeGreaterThan(0);
    expect(userView(seen).types).toEqual(SURVEY_TURN_EVENTS);
  });

  it('tells with the status where the log ends: a follower from there reads the next turn from its start', async () => {
    script();
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    await conversation.send('How many answered?');
    const attached = await conversation.statusAndOffset();
    expect(attached).toMatchObject({ state: 'idle', turn: 1 });
    expect(attached.eventOffset).toBe(await conversation.eventOffset());
    expect(attached.eventOffset).toBeGreaterThan(0);

    script();
    const seen: ConversationEventItem[] = [];
    const following = (async () => {
      for await (const event of conversation.events({
        fromOffset: attached.eventOffset,
        liveChannel: false,
      })) {
        seen.push(event);
        if (event.type === 'turnEnd') break;
      }
    })();
    await conversation.send('And now?');
    await following;
    expect(seen[0]).toMatchObject({ type: 'turnStart', turn: 2, offset: attached.eventOffset });
    expect(seen.filter((event) => event.turn !== 2)).toEqual([]);
  });
});
