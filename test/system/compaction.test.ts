import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { answer, compactedConversation, WINDOW_BYTES } from '../support/compactionScenario.ts';

describe('compaction of a long conversation', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ maxContextBytes: WINDOW_BYTES });
    agent.model.respond(answer);
  });
  afterAll(async () => agent?.close());

  it('compacts a 300-turn conversation: all 600 messages stay readable, the model sees the summary and the recent turns', async () => {
    await compactedConversation(agent, 300);
  }, 180_000);
});
