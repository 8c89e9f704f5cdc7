import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type S3Server, startS3Server } from '../support/s3Server.ts';

const RESULT = `RESULT ${'r'.repeat(1_000_000)}`;
const OUTAGE_MS = 20_000;

/**
 * A conversation's events from offset 0 to its first turn's end, as offset and type; an event read
 * live, before the log took it, as `live` and type.
 */
async function followTurn(conversation: Conversation): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of conversation.events({ fromOffset: 0, signal: AbortSignal.timeout(120_000) })) {
    seen.push(`${event.live ? 'live' : event.offset} ${event.type}`);
    if (event.type === 'turnEnd') break;
  }
  return seen;
}

/** `logged` (from the log, after the turn) with the events `followed` read live marked so. */
function asFollowed(logged: string[], followed: string[]): string[] {
  return logged.map((item, index) =>
    followed[index]?.startsWith('live ') ? `live ${item.split(' ')[1]}` : item,
  );
}

/**
 * The S3 payload store stopped while a tool finishes a 1 MB result: the worker keeps the result and
 * tries the store again, so the tool runs once, and the turn completes once the store is back; a
 * store that stays down ends the call with an error naming it, the tool still run once.
 */
describe('a payload store outage during a 1 MB tool result', () => {
  let s3: S3Server;
  let runs = 0;
  let release: () => void = () => {};
  let released = Promise.resolve();
  let started: () => void = () => {};
  let running = Promise.resolve();
  const bigResult: AgentTool = {
    name: 'bigResult',
    label: 'Big result',
    description: 'Returns 1 MB',
    inputSchema: { type: 'object', properties: {} },
    parallelToolExecute: true,
    async execute() {
      runs++;
      started();
      await released;
      return textResult(RESULT);
    },
  };
  const agents: TestAgent[] = [];
  const startAgent = async (payloadStoreRetryMs?: number): Promise<TestAgent> => {
    const dataConverter = dataConverterFromEnv(s3.env);
    if (!dataConverter) throw new Error('the S3 environment configures no store');
    const agent = await startTestAgent({
      tools: [bigResult],
      worker: { connection: { dataConverter, ...(payloadStoreRetryMs ? { payloadStoreRetryMs } : {}) } },
    });
    agents.push(agent);
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_big', name: 'bigResult', arguments: {} }] },
      { kind: 'text', text: 'Done.' },
    );
    return agent;
  };
  /** Starts a turn whose tool waits; resolves once the tool runs, with the turn's result to come. */
  const turnWithWaitingTool = async (agent: TestAgent) => {
    running = new Promise((resolve) => {
      started = resolve;
    });
    released = new Promise((resolve) => {
      release = resolve;
    });
    const conversation = await agent.client.startConversation({ systemPrompt: 'Fetch.', compaction: false });
    const reply = conversation.send('fetch it');
    await running;
    return { conversation, reply };
  };

  beforeAll(async () => {
    s3 = await startS3Server();
  }, 600_000);
  afterEach(async () => {
    release();
    await s3.start();
    runs = 0;
  });
  afterAll(async () => {
    for (const agent of agents) await agent.close();
    await s3?.close();
  });

  it('runs the tool once and completes the turn when the store is back 20 s later', async () => {
    const agent = await startAgent();
    const { conversation, reply } = await turnWithWaitingTool(agent);
    // A follower from the start, on the store's live channel, follows through the outage.
    const following = followTurn(conversation).catch((error: Error) => [`failed: ${error.message}`]);
    await s3.stop();
    release();

    // Meanwhile a 100 KB prompt cannot be stored: refused at once, naming the store.
    const other = await agent.client.startConversation({ systemPrompt: 'Other.' });
    const refused = await other.send(`big ${'p'.repeat(100_000 - 4)}`).then(
      () => 'sent',
      (error: Error) => error.message,
    );
    expect(refused).toContain(`S3 payload store s3://${s3.bucket}/`);
    expect(refused).toContain('ECONNREFUSED');

    await sleep(OUTAGE_MS);
    const backAt = Date.now();
    await s3.start();
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Done.' });
    console.log(`store outage: the turn completed ${Date.now() - backAt} ms after the store was back`);
    expect(runs).toBe(1);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result).toMatchObject({ role: 'toolResult', isError: false });
    expect(result.content[0]?.text).toBe(RESULT);

    // The follower saw every event of the log once, in the log's order (the second model call's
    // perhaps live, once the store was back).
    const logged = await followTurn(conversation);
    expect(logged.at(-1)).toMatch(/^\d+ turnEnd$/);
    const followed = await following;
    console.log(`store outage: the follower read ${followed.join(', ')}`);
    expect(followed).toEqual(asFollowed(logged, followed));
  });

  it('ends the call with an error naming the store when it stays down, without running the tool again', async () => {
    const agent = await startAgent(3_000);
    const { conversation, reply } = await turnWithWaitingTool(agent);
    await s3.stop();
    release();

    expect(await reply).toMatchObject({ status: 'completed', reply: 'Done.' });
    expect(runs).toBe(1);
    const result = (await conversation.messages())[2] as ToolResultMessage;
    expect(result).toMatchObject({ role: 'toolResult', isError: true });
    const text = result.content[0]?.text ?? '';
    expect(text).toMatch(/^Tool "bigResult" finished, but its result was lost: S3 payload store s3:\/\//);
    expect(text).toContain(s3.bucket);
    expect(text).toContain('ECONNREFUSED');
    expect(text).toContain('It was not run again.');
    // The model read the same.
    expect(agent.model.lastRequest()?.body.messages.at(-1)).toMatchObject({ role: 'tool', content: text });
    // The event log's toolEnd says so too (read once the store is back: followers use its live channel).
    await s3.start();
    const ends = [];
    for await (const event of conversation.events()) {
      if (event.type === 'toolEnd') ends.push(event);
      if (event.type === 'turnEnd') break;
    }
    expect(ends).toEqual([
      expect.objectContaining({ isError: true, text: expect.stringContaining('S3 payload store') }),
    ]);
  });
});
