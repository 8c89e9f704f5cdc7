/**
 * A worker process for crash tests, started by workerProcess.ts: it runs an agent worker whose
 * `step` tool leaves a marker file per attempt and waits until the test releases it, so the test
 * knows where a tool is and can kill the whole process there (`localStep` the same as a local
 * activity, `batchedStep` batched). `pay` and `payBlind` are at-most-once
 * tools that record each payment in a ledger file before they wait (`pay` can reconcile from it);
 * `askClient` is a callback tool; `transfer` waits for a person's approval. With
 * `KILL_ON_TOOL_START=<tool>` the worker SIGKILLs itself when
 * the workflow starts a call of that tool (a sub-agent, handoff or callback tool): inside the
 * workflow task, before its completion reaches the server.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger } from '@temporalio/worker';
import { agentTool, callbackTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentEventSink } from '../../src/contract/types/events.ts';
import type { ActivityTool, AgentTool, ReconcileAnswer } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/infrastructure/toolCallContext.ts';
import { installWorkerRuntime } from '../../src/worker/runtime.ts';
import { createAgentWorker } from '../../src/worker/worker.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`markerWorker needs ${name}`);
  return value;
};
const markerDir = env('MARKER_DIR');
const workerName = env('WORKER_NAME');
/** `worker.maxWorkerDeaths`, when a test sets `MAX_WORKER_DEATHS`. */
const maxWorkerDeaths = process.env.MAX_WORKER_DEATHS;
const ledgerDir = path.join(markerDir, 'ledger');
await mkdir(ledgerDir, { recursive: true });

/** Tests read these files while tools write them: a reader sees a whole file or none. */
async function writeAtomically(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}

/** Leaves `<toolCallId>.<attempt>.<worker>.json`, holding what the tool saw of its call. */
async function leaveMarker(toolCallId: string): Promise<ReturnType<typeof currentToolCall>> {
  const call = currentToolCall();
  await writeAtomically(
    path.join(markerDir, `${toolCallId}.${call.attempt}.${workerName}.json`),
    JSON.stringify(call),
  );
  return call;
}

async function untilReleased(signal: AbortSignal | undefined): Promise<void> {
  while (!existsSync(path.join(markerDir, 'release'))) {
    signal?.throwIfAborted();
    await sleep(50);
  }
}

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
    const call = await leaveMarker(toolCallId);
    await untilReleased(signal);
    return textResult(`step ${toolCallId} done by ${workerName} on attempt ${call.attempt}`);
  },
};

/** {@link step} declared `localActivity`: its calls run inside the workflow task that asked for them. */
const localStep: ActivityTool = {
  name: 'localStep',
  label: 'Local step',
  description: 'Does one step as a local activity; waits until the test releases it',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  localActivity: true,
  policy: {
    retry: { maximumAttempts: 5, initialInterval: '100 milliseconds', maximumInterval: '500 milliseconds' },
  },
  execute: async (toolCallId, _args, signal) => {
    const call = await leaveMarker(toolCallId);
    await untilReleased(signal);
    return textResult(`local step ${toolCallId} done by ${workerName} on attempt ${call.attempt}`);
  },
};

/**
 * {@link step} declared `batched`: a reply's calls share one `executeTools` activity. A call with
 * `wait: true` waits for the release; the others end at once.
 */
const batchedStep: ActivityTool = {
  name: 'batchedStep',
  label: 'Batched step',
  description: 'Does one step in a batch; with wait, waits until the test releases it',
  inputSchema: { type: 'object', properties: { wait: { type: 'boolean' } } },
  parallelToolExecute: true,
  batched: true,
  policy: step.policy,
  execute: async (toolCallId, args, signal) => {
    const call = await leaveMarker(toolCallId);
    if (args.wait === true) await untilReleased(signal);
    return textResult(`batched step ${toolCallId} done by ${workerName} on attempt ${call.attempt}`);
  },
};

/** The payment service's ledger: one file per idempotency key, `ledger/<key>.json`. */
const ledgerEntry = (idempotencyKey: string): string =>
  path.join(ledgerDir, `${encodeURIComponent(idempotencyKey)}.json`);

const pay: ActivityTool = {
  name: 'pay',
  label: 'Pay',
  description: 'Pays an amount; must not pay twice',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  parallelToolExecute: false,
  policy: step.policy,
  atMostOnce: true,
  execute: async (toolCallId, args, signal) => {
    const call = currentToolCall();
    await writeAtomically(
      ledgerEntry(call.idempotencyKey),
      JSON.stringify({ amount: args.amount, by: workerName }),
    );
    await leaveMarker(toolCallId);
    await untilReleased(signal);
    return textResult(`paid ${args.amount} by ${workerName}`);
  },
  reconcile: async (idempotencyKey): Promise<ReconcileAnswer> => {
    let entry: { amount: number; by: string };
    try {
      entry = JSON.parse(await readFile(ledgerEntry(idempotencyKey), 'utf8'));
    } catch {
      return 'notDone';
    }
    return { done: textResult(`paid ${entry.amount} by ${entry.by} (found by reconcile on ${workerName})`) };
  },
};
const { reconcile: _reconcile, ...payWithoutReconcile } = pay;
const payBlind: ActivityTool = { ...payWithoutReconcile, name: 'payBlind' };

/** A tool a person approves first: a worker can be killed while a conversation waits for that approval. */
const transfer: ActivityTool = {
  name: 'transfer',
  label: 'Transfer',
  description: 'Sends money once a person approves',
  inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: async () => textResult('sent'),
};

const askClient = callbackTool({
  name: 'askClient',
  label: 'Ask the client',
  description: 'Asks the attached client',
  inputSchema: { type: 'object', properties: { question: { type: 'string' } } },
  timeout: '2 minutes',
});

const killOn = process.env.KILL_ON_TOOL_START;
// With `KILL_ON_TOOL_END=<tool>` the worker SIGKILLs itself once such a call's execute has returned
// (and FINALIZE ran), before its result reaches the server: its effect is done, its end unknown.
const killOnEnd = process.env.KILL_ON_TOOL_END;
const eventSink: AgentEventSink | undefined =
  killOn || killOnEnd
    ? (event) => {
        if (event.type === 'toolExecutionStart' && event.toolName === killOn)
          process.kill(process.pid, 'SIGKILL');
        if (event.type === 'toolExecutionEnd' && event.toolName === killOnEnd)
          process.kill(process.pid, 'SIGKILL');
      }
    : undefined;
// With `TOOLS_DIR` the worker also loads the tool files of that folder, as `yiem worker --tools-dir`.
const toolsDir = process.env.TOOLS_DIR;

installWorkerRuntime({ logger: new DefaultLogger('ERROR') });
const agent = await createAgentWorker({
  connection: { address: env('TEMPORAL_ADDRESS'), taskQueue: env('YIEM_TASK_QUEUE') },
  tools: {
    builtinTools: false,
    // A sub-agent whose only tool is `step`, to kill a worker during a child conversation's turn.
    tools: [
      step,
      localStep,
      batchedStep,
      agentTool({ name: 'helper', description: 'Does steps', systemPrompt: 'You help.', tools: ['step'] }),
      pay,
      payBlind,
      askClient,
      transfer,
    ],
    ...(toolsDir ? { toolsDir } : {}),
  },
  ...(eventSink ? { hooks: { eventSink } } : {}),
  models: { model: { baseURL: env('MODEL_BASE_URL'), apiKey: 'test', model: 'scripted', timeoutMs: 30_000 } },
  worker: {
    workflowBundle: { code: await readFile(env('WORKFLOW_BUNDLE'), 'utf8') },
    // A killed worker's sticky queue is abandoned; its conversations move on to another worker quickly.
    options: { stickyQueueScheduleToStartTimeout: '1 second' },
    ...(maxWorkerDeaths ? { maxWorkerDeaths: Number(maxWorkerDeaths) } : {}),
  },
});
const running = agent.run();
process.stdout.write('ready\n');
await running;
