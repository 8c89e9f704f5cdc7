import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { scheduledActivities } from '../support/history.ts';

/** The run ids of a conversation, first to latest, following its continue-as-new chain back. */
async function runIds(agent: TestAgent, conversation: Conversation): Promise<string[]> {
  const runs: string[] = [];
  let runId: string | undefined = (await conversation.handle.describe()).runId;
  while (runId) {
    runs.unshift(runId);
    const run: WorkflowHandle = agent.client.client.workflow.getHandle(conversation.id, runId);
    const previous: string | null | undefined = (await run.fetchHistory()).events?.[0]
      ?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    runId = previous || undefined;
  }
  return runs;
}

const runHandle = (agent: TestAgent, conversation: Conversation, runId: string | undefined) =>
  agent.client.client.workflow.getHandle(conversation.id, runId);

describe('unbounded conversations', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it('continues as new every few turns; the client keeps the same id and sees one conversation', async () => {
    agent.model.reset();
    agent.model.respond((_request, index) => ({ kind: 'text', text: `answer ${index + 1}` }));
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember everything.',
      toolExecution: 'sequential',
      maxTurnsPerRun: 2,
    });
    for (let turn = 1; turn <= 5; turn++) {
      expect(await conversation.send(`message ${turn}`)).toMatchObject({
        turn,
        status: 'completed',
        reply: `answer ${turn}`,
      });
    }

    const runs = await runIds(agent, conversation);
    expect(runs).toHaveLength(3);
    expect(await conversation.status()).toMatchObject({
      turn: 5,
      messageCount: 10,
      toolExecution: 'sequential',
      lastTurn: { turn: 5, status: 'completed' },
    });
    const transcript = await conversation.messages();
    expect(transcript.map((message) => message.content)).toEqual(
      [1, 2, 3, 4, 5].flatMap((turn) => [`message ${turn}`, `answer ${turn}`]),
    );
    // The model saw the whole conversation, across runs, with the original system prompt.
    const sent = agent.model.lastRequest()?.body.messages;
    expect(sent?.[0]).toEqual({ role: 'system', content: 'Remember everything.' });
    expect(sent).toHaveLength(10);

    await replayAndRecord(runHandle(agent, conversation, runs[0]), 'continue-as-new-first-run');
    await replayAndRecord(runHandle(agent, conversation, runs[1]), 'continue-as-new-middle-run');
    expect(await conversation.end()).toEqual({
      turns: 5,
      messageCount: 10,
      lastTurn: expect.objectContaining({ turn: 5, status: 'completed', reply: 'answer 5' }),
      // What was spent is handed from run to run.
      spend: expect.objectContaining({ modelCalls: 5 }),
    });
  });

  it('hands a posted message that no turn consumed yet to the next run', async () => {
    agent.model.reset();
    agent.model.respond(undefined);
    agent.model.enqueue({ kind: 'text', text: 'first', delayMs: 1_000 }, { kind: 'text', text: 'second' });
    const conversation = await agent.client.startConversation({ systemPrompt: '', maxTurnsPerRun: 1 });
    await conversation.post('a');
    await expect.poll(() => agent.model.requestCount, { timeout: 10_000 }).toBe(1);
    await conversation.post('b');

    await expect
      .poll(async () => (await conversation.status()).lastTurn, { timeout: 10_000 })
      .toMatchObject({ turn: 2, status: 'completed', reply: 'second' });
    const transcript = await conversation.messages();
    expect(transcript.map((message) => [message.role, message.content])).toEqual([
      ['user', 'a'],
      ['assistant', 'first'],
      ['user', 'b'],
      ['assistant', 'second'],
    ]);
    // The first run received both messages but called the model once: "b" crossed over pending.
    const [firstRun] = await runIds(agent, conversation);
    const first = runHandle(agent, conversation, firstRun);
    const modelCalls = (await scheduledActivities(first)).filter((activity) => activity.type === 'callModel');
    expect(modelCalls).toHaveLength(1);
    // Both posts reached the first run (the slow model call's live events are signals too).
    const posts = (await first.fetchHistory()).events?.filter(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'post',
    );
    expect(posts).toHaveLength(2);
    await replayAndRecord(first, 'continue-as-new-with-pending');
  });
});

describe('when Temporal suggests continuing as new', () => {
  let dataDir: string;
  let server: DevServer;
  let agent: TestAgent;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-suggest-'));
    // A server that suggests continue-as-new once a run has 30 events, about three turns.
    server = await startDevServer({
      dataDir,
      cliPath: await ensureTemporalCli(),
      port: 0,
      headless: true,
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
    });
    agent = await startTestAgent({ address: server.address });
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('continues as new without a configured turn limit, and loses nothing', async () => {
    agent.model.respond((_request, index) => ({ kind: 'text', text: `answer ${index + 1}` }));
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    for (let turn = 1; turn <= 8; turn++) {
      expect(await conversation.send(`message ${turn}`)).toMatchObject({ turn, reply: `answer ${turn}` });
    }
    expect((await runIds(agent, conversation)).length).toBeGreaterThan(1);
    const transcript = await conversation.messages();
    expect(transcript.map((message) => message.content)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].flatMap((turn) => [`message ${turn}`, `answer ${turn}`]),
    );
  });
});
