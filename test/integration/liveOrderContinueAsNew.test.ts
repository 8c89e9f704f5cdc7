import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { followAcrossContinueAsNew, lookupTool } from '../support/liveOrder.ts';

/**
 * Followers on the live channel (the default file store) of a conversation that continues as new
 * every 3 turns, with 20 KB messages and a tool call in turn 2: each event once, in the log's order.
 * The model calls of a new run have the activity ids of the run before; their previews were once
 * taken for the earlier calls', which showed a `messageEnd` before its `messageStart`.
 * (test/system/s3LiveOrder.test.ts: the same on the S3 store.)
 */
describe('live events in log order across continue-as-new', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ tools: [lookupTool] });
  });
  afterAll(async () => agent?.close());

  it('from offset 0 and from the middle, each turn’s events once and in order', async () => {
    await followAcrossContinueAsNew(agent);
  });

  it('goes on from offset 0 past a turn whose 1 MB reply the log could not keep', async () => {
    agent.model.reset();
    agent.model.enqueue({ kind: 'text', text: 'f'.repeat(1_000_000) }, { kind: 'text', text: 'small' });
    const conversation = await agent.client.startConversation({ systemPrompt: '', compaction: false });
    await conversation.send('big');
    const types: string[] = [];
    const following = (async () => {
      for await (const event of conversation.events({ fromOffset: 0, signal: AbortSignal.timeout(30_000) })) {
        types.push(event.type);
        if (event.type === 'turnEnd' && event.result.turn === 2) return;
      }
    })();
    await conversation.send('then small');
    await following;
    // The log keeps its latest megabyte: the big turn's events are gone from it, the next turn's come.
    expect(types.slice(-5)).toEqual(['turnStart', 'messageStart', 'textDelta', 'messageEnd', 'turnEnd']);
  });
});
