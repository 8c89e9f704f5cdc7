import { afterAll, beforeAll, describe, it } from 'vitest';
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
});
