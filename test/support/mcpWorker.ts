/**
 * A worker process for the MCP crash tests, started through workerProcess.ts: an agent worker whose
 * only tools come from the MCP servers in the config file `MCP_CONFIG`, read as `yiem worker --mcp` does.
 */
import { readFile } from 'node:fs/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadMcpConfig } from '../../src/worker/mcp/config.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`mcpWorker needs ${name}`);
  return value;
};

Runtime.install({ logger: new DefaultLogger('ERROR') });
const agent = await createAgentWorker({
  connection: { address: env('TEMPORAL_ADDRESS'), taskQueue: env('YIEM_TASK_QUEUE') },
  tools: { builtinTools: false, mcpServers: await loadMcpConfig(env('MCP_CONFIG')) },
  models: { model: { baseURL: env('MODEL_BASE_URL'), apiKey: 'test', model: 'scripted', timeoutMs: 30_000 } },
  worker: {
    workflowBundle: { code: await readFile(env('WORKFLOW_BUNDLE'), 'utf8') },
    // A killed worker's sticky queue is abandoned; its conversations move on to another worker quickly.
    options: { stickyQueueScheduleToStartTimeout: '1 second' },
  },
});
const running = agent.run();
process.stdout.write('ready\n');
await running;
