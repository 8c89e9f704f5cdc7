import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { startTestAgent, type TestAgent } from './agentHarness.ts';

export const echoTool: AgentTool = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`echo: ${String(args.text)}`),
};

/** {@link echoTool} declared `batched`: a reply's calls share one `executeTools` activity. */
export const batchedEchoTool: AgentTool = { ...echoTool, name: 'batchedEcho', batched: true };

export interface MeteredAgent {
  server: DevServer;
  agent: TestAgent;
  close(): Promise<void>;
}

/**
 * A dev server of the test's own, with its metrics endpoint, so its counters (`action`,
 * `grpc_QueryWorkflow`…) count this test's work and no other test's; and an agent on it with `echo` and `batchedEcho`.
 */
export async function startMeteredAgent(): Promise<MeteredAgent> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-metered-'));
  const server = await startDevServer({
    dataDir,
    cliPath: await ensureTemporalCli(),
    port: 0,
    headless: true,
    metricsPort: 0,
  });
  const agent = await startTestAgent({ address: server.address, tools: [echoTool, batchedEchoTool] });
  return {
    server,
    agent,
    async close() {
      await agent.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
