import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const WINDOW_BYTES = 20_000;
const turnText = (turn: number) => `turn ${turn} ${'w'.repeat(6_000)}`;

describe('the model context window', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ maxContextBytes: WINDOW_BYTES });
  });
  afterAll(async () => agent?.close());

  it('without compaction, sends the model the latest turns that fit, says what it left out, and keeps the whole transcript', async () => {
    agent.model.respond(() => ({ kind: 'text', text: `answer ${agent.model.requestCount}` }));
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Remember.',
      compaction: false,
    });
    for (let turn = 1; turn <= 8; turn++) {
      expect(await conversation.send(turnText(turn))).toMatchObject({ status: 'completed' });
    }
    const sent = agent.model.lastRequest()?.body.messages ?? [];
    expect(JSON.stringify(sent).length).toBeLessThan(WINDOW_BYTES + 1_000);
    expect(sent[0]).toMatchObject({ role: 'system' });
    expect(String(sent[0]?.content)).toMatch(
      /^Remember\.\n\n\[The \d+ earliest messages of this conversation are not shown/,
    );
    expect(sent[1]).toMatchObject({ role: 'user' });
    expect(sent.at(-1)).toEqual({ role: 'user', content: turnText(8) });

    const messages = await conversation.messages();
    expect(messages).toHaveLength(16);
    expect(messages[0]).toMatchObject({ role: 'user', content: turnText(1) });
  });
});
