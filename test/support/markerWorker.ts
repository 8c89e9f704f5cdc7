/**
 * A worker process for crash tests, started by workerProcess.ts: it runs an agent worker whose
 * `step` tool leaves a marker file per attempt and waits until the test releases it, so the test
 * knows where a tool is and can kill the whole process there.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types.ts';
import { currentToolCall } from '../../src/worker/toolCallContext.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`markerWorker needs ${name}`);
  return value;
};
const markerDir = env('MARKER_DIR');
const workerName = env('WORKER_NAME');

const step: AgentTool = {
  name: 'step',
  label: 'Step',
  description: 'Does one step; waits until the test releases it',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  policy: {
    heartbeatTimeout: '2 seconds',
    retry: { maximumAttempts: 5, initialInterval: '100 milliseconds', maximumInterval: '500 milliseconds' },
  },
  execute: async (toolCallId, _args, signal) => {
    const call = currentToolCall();
    // `<toolCallId>.<attempt>.<worker>.json`, holding what the tool saw of its call.
    const marker = path.join(markerDir, `${toolCallId}.${call.attempt}.${workerName}.json`);
    await writeFile(marker, JSON.stringify(call));
    while (!existsSync(path.join(markerDir, 'release'))) {
      signal?.throwIfAborted();
      await sleep(50);
    }
    return textResult(`step ${toolCallId} done by ${workerName} on attempt ${call.attempt}`);
  },
};

Runtime.install({ logger: new DefaultLogger('ERROR') });
const agent = await createAgentWorker({
  address: env('TEMPORAL_ADDRESS'),
  taskQueue: env('YIEM_TASK_QUEUE'),
  builtinTools: false,
  // A sub-agent whose only tool is `step`, to kill a worker during a child conversation's turn.
  tools: [
    step,
    agentTool({ name: 'helper', description: 'Does steps', systemPrompt: 'You help.', tools: ['step'] }),
  ],
  model: { baseURL: env('MODEL_BASE_URL'), apiKey: 'test', model: 'scripted', timeoutMs: 30_000 },
  workflowBundle: { code: await readFile(env('WORKFLOW_BUNDLE'), 'utf8') },
  // A killed worker's sticky queue is abandoned; its conversations move on to another worker quickly.
  workerOptions: { stickyQueueScheduleToStartTimeout: '1 second' },
});
const running = agent.run();
process.stdout.write('ready\n');
await running;
