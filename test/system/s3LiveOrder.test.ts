import { afterAll, beforeAll, describe, it } from 'vitest';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { followAcrossContinueAsNew, lookupTool } from '../support/liveOrder.ts';
import { type S3Server, startS3Server } from '../support/s3Server.ts';

/** test/integration/liveOrderContinueAsNew.test.ts on the S3 store's live channel (the real S3-compatible server). */
describe('live events in log order across continue-as-new, on the S3 store', () => {
  let s3: S3Server;
  let agent: TestAgent;
  beforeAll(async () => {
    s3 = await startS3Server();
    const dataConverter = dataConverterFromEnv(s3.env);
    if (!dataConverter) throw new Error('the S3 environment configures no store');
    agent = await startTestAgent({ tools: [lookupTool], worker: { connection: { dataConverter } } });
  }, 600_000);
  afterAll(async () => {
    await agent?.close();
    await s3?.close();
  });

  it('from offset 0 and from the middle, each turn’s events once and in order', async () => {
    await followAcrossContinueAsNew(agent);
  });
});
