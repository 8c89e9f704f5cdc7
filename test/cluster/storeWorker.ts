/**
 * A worker process for the across-machines test (acrossMachines.test.ts), started in a folder of its
 * own: its payload store and codec keys come from the environment only, as on another machine. Its
 * `survey` tool returns a 1 MB result; it leaves a marker per attempt and waits for the test's
 * release file, so the test can SIGKILL the worker that runs it.
 */
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/infrastructure/toolCallContext.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';
import { surveyText } from './survey.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`storeWorker needs ${name}`);
  return value;
};
const markerDir = env('MARKER_DIR');
const workerName = env('WORKER_NAME');

const survey: AgentTool = {
  name: 'survey',
  label: 'Survey',
  description: 'Surveys a site; waits until the test releases it',
  inputSchema: { type: 'object', properties: { site: { type: 'string' } }, required: ['site'] },
  parallelToolExecute: true,
  policy: {
    heartbeatTimeout: '2 seconds',
    retry: { maximumAttempts: 5, initialInterval: '100 milliseconds', maximumInterval: '500 milliseconds' },
  },
  execute: async (toolCallId, args, signal) => {
    const { site } = args as { site: string };
    const call = currentToolCall();
    const marker = path.join(markerDir, `${toolCallId}.${call.attempt}.${workerName}.json`);
    // Written whole or not at all: the test reads markers while tools write them.
    await writeFile(`${marker}.tmp`, JSON.stringify({ site, cwd: process.cwd() }));
    await rename(`${marker}.tmp`, marker);
    while (!existsSync(path.join(markerDir, 'release'))) {
      signal?.throwIfAborted();
      await sleep(50);
    }
    return textResult(surveyText(site));
  },
};

Runtime.install({ logger: new DefaultLogger('ERROR') });
const agent = await createAgentWorker({
  connection: { address: env('TEMPORAL_ADDRESS'), taskQueue: env('YIEM_TASK_QUEUE') },
  tools: { builtinTools: false, tools: [survey] },
  models: { model: { baseURL: env('MODEL_BASE_URL'), apiKey: 'test', model: 'scripted', timeoutMs: 30_000 } },
  worker: {
    workflowBundle: { code: await readFile(env('WORKFLOW_BUNDLE'), 'utf8') },
    // A killed worker's sticky queue is abandoned; its conversations move on to the other one quickly.
    options: { stickyQueueScheduleToStartTimeout: '1 second' },
  },
});
const running = agent.run();
process.stdout.write('ready\n');
await running;
