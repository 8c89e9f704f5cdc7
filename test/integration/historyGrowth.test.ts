import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const MESSAGE_BYTES = 1_000;
const TURNS = 50;

/** Same size every turn, so every turn adds the same new messages. */
const userText = (turn: number): string => `${String(turn).padStart(3, '0')} ${'u'.repeat(MESSAGE_BYTES)}`;
const replyText = (turn: number): string => `${String(turn).padStart(3, '0')} ${'r'.repeat(MESSAGE_BYTES)}`;

async function historyBytes(conversation: Conversation): Promise<number> {
  return historyToJSON(await conversation.handle.fetchHistory()).length;
}

/** History bytes a turn adds: measured around it. */
async function turnGrowth(conversation: Conversation, turn: number): Promise<number> {
  const before = await historyBytes(conversation);
  await conversation.send(userText(turn));
  return (await historyBytes(conversation)) - before;
}

describe('history discipline', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it(`adds as many bytes to history on turn ${TURNS} as on turn 5, though the context grew`, async () => {
    agent.model.respond(() => ({ kind: 'text', text: replyText(agent.model.requestCount) }));
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    const growth = new Map<number, number>();
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn === 5 || turn === TURNS) growth.set(turn, await turnGrowth(conversation, turn));
      else await conversation.send(userText(turn));
    }
    const early = growth.get(5) ?? 0;
    const late = growth.get(TURNS) ?? 0;

    // By now every model call sends the whole context: about 100 KB of earlier messages.
    const contextBytes = JSON.stringify(agent.model.lastRequest()?.body.messages).length;
    expect(contextBytes).toBeGreaterThan((TURNS - 1) * 2 * MESSAGE_BYTES);
    // Allowance for longer event ids and counters ("turn 50" vs "turn 5"), not for any message.
    expect(late - early).toBeLessThan(200);
  });
});
