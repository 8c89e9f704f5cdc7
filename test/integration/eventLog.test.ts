import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const REPLY_BYTES = 150_000;
const TURNS = 10;

describe('the event log of a conversation with large replies', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ chunkSize: 50_000 });
  });
  afterAll(async () => agent?.close());

  it('keeps the latest megabyte of events for followers, not every reply ever streamed', async () => {
    agent.model.respond((_request, index) => ({
      kind: 'text',
      text: `${index} ${'r'.repeat(REPLY_BYTES)}`.slice(0, REPLY_BYTES),
    }));
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    for (let turn = 1; turn <= TURNS; turn++) await conversation.send(`turn ${turn}`);

    const followed: ConversationEventItem[] = [];
    const stop = new AbortController();
    for await (const item of conversation.events({ signal: stop.signal })) {
      followed.push(item);
      if (item.type === 'turnEnd' && item.turn === TURNS) stop.abort();
    }
    // Each turn's events hold its reply twice (the text deltas and the turn's result).
    expect(JSON.stringify(followed).length).toBeLessThanOrEqual(1024 * 1024);
    expect(followed[0]?.offset).toBeGreaterThan(0);
    expect(followed[0]?.turn).toBeGreaterThan(1);
    expect(followed.filter((item) => item.type === 'turnEnd').length).toBeGreaterThanOrEqual(2);
    expect(followed.at(-1)).toMatchObject({ type: 'turnEnd', turn: TURNS, result: { status: 'completed' } });
    // The transcript keeps every reply.
    expect((await conversation.messages()).filter((message) => message.role === 'assistant')).toHaveLength(
      TURNS,
    );
  });
});
