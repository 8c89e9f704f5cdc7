import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { inject } from 'vitest';
import { AgentClient, type AgentClientOptions } from '../../src/client/client.ts';
import type { AgentEvent } from '../../src/contract/types/events.ts';
import type { AgentHooks } from '../../src/contract/types/hooks.ts';
import type { ModelSettings } from '../../src/contract/types/models.ts';
import type { SelfWritingOptions } from '../../src/contract/types/sandbox.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import type { GroupedWorkerOptions } from '../../src/worker/options.ts';
import { type AgentWorker, createAgentWorker } from '../../src/worker/worker.ts';

let bundle: Promise<{ code: string }> | undefined;
/** The workflow bundle, built once per test file process. */
export function workflowBundle(): Promise<{ code: string }> {
  bundle ??= quietBundle(fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)));
  return bundle;
}

/** A workflow bundle of `workflowsPath`, built without webpack's report of each module. */
export function quietBundle(workflowsPath: string): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
}

export interface TestAgentOptions {
  tools?: AgentTool[];
  builtinTools?: boolean;
  hooks?: AgentHooks;
  toolsDir?: string;
  selfWriting?: SelfWritingOptions;
  /** How long one model HTTP request may take. Default 5 s. */
  modelTimeoutMs?: number;
  maxToolResultBytes?: number;
  /** The model's context window in bytes (default: the worker's, 1 MB). */
  maxContextBytes?: number;
  /** The worker's price table (`ModelSettings.prices`). */
  prices?: ModelSettings['prices'];
  /** Characters per streamed delta of the scripted model (default: about four pieces a reply). */
  chunkSize?: number;
  /** Another Temporal server than the run's shared one. */
  address?: string;
  /** More worker options (a data converter, tracing, another task queue...), merged into each group. */
  worker?: GroupedWorkerOptions;
  /** More client options; a `dataConverter` given to the worker is passed on unless set here. */
  client?: Partial<AgentClientOptions>;
}

/** A real worker on its own task queue, a scripted model server, and a client, against the test server. */
export interface TestAgent {
  address: string;
  taskQueue: string;
  model: ScriptedModel;
  worker: AgentWorker;
  client: AgentClient;
  /** Every event the worker's sink received, in order. */
  events: AgentEvent[];
  /** Shuts the worker down and starts a new one on the same task queue (workflows resume from history). */
  restartWorker(): Promise<void>;
  /** Shuts the worker down; conversations wait, and what happens meanwhile reaches the next worker at once. */
  stopWorker(): Promise<void>;
  /** Starts a new worker on the same task queue after `stopWorker`. */
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestAgent(options: TestAgentOptions = {}): Promise<TestAgent> {
  const address = options.address ?? inject('temporalAddress');
  const taskQueue = options.worker?.connection?.taskQueue ?? `test-${randomUUID()}`;
  const model = await startScriptedModel(options.chunkSize ? { chunkSize: options.chunkSize } : {});
  const events: AgentEvent[] = [];
  const startWorker = async (): Promise<{ worker: AgentWorker; running: Promise<void> }> => {
    const defaults: GroupedWorkerOptions = {
      connection: { address, taskQueue },
      models: {
        model: {
          baseURL: model.baseURL,
          apiKey: 'test-key-never-in-history',
          model: 'scripted',
          timeoutMs: options.modelTimeoutMs ?? 5_000,
          ...(options.maxContextBytes ? { maxContextBytes: options.maxContextBytes } : {}),
          ...(options.prices ? { prices: options.prices } : {}),
        },
      },
      tools: {
        tools: options.tools ?? [],
        builtinTools: options.builtinTools ?? false,
        ...(options.toolsDir ? { toolsDir: options.toolsDir } : {}),
        ...(options.selfWriting ? { selfWriting: options.selfWriting } : {}),
        ...(options.maxToolResultBytes ? { maxToolResultBytes: options.maxToolResultBytes } : {}),
      },
      hooks: {
        ...(options.hooks ? { toolCalls: options.hooks } : {}),
        eventSink: (event) => events.push(event),
      },
      worker: { workflowBundle: await workflowBundle() },
    };
    const worker = await createAgentWorker(mergedGroups(defaults, options.worker ?? {}));
    return { worker, running: worker.run() };
  };
  let current = await startWorker();
  const dataConverter = options.worker?.connection?.dataConverter;
  const client = new AgentClient({
    address,
    taskQueue,
    ...(dataConverter ? { dataConverter } : {}),
    ...options.client,
  });
  return {
    address,
    taskQueue,
    model,
    get worker() {
      return current.worker;
    },
    client,
    events,
    async restartWorker() {
      await current.worker.shutdown();
      await current.running;
      current = await startWorker();
    },
    async stopWorker() {
      await current.worker.shutdown();
      await current.running;
    },
    async startWorker() {
      current = await startWorker();
    },
    async close() {
      await current.worker.shutdown();
      await current.running;
      await client.close();
      await model.close();
    },
  };
}

/** Fast model retries so tests of provider errors finish in seconds. */
export const FAST_MODEL_RETRY = {
  retry: { initialInterval: '50 milliseconds', maximumInterval: '200 milliseconds', maximumAttempts: 3 },
};

/** `overrides` over `defaults`, group by group: a group's fields given in `overrides` replace its defaults'. */
function mergedGroups(defaults: GroupedWorkerOptions, overrides: GroupedWorkerOptions): GroupedWorkerOptions {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [group, fields] of Object.entries(overrides)) {
    const base = merged[group];
    merged[group] = base && fields && typeof fields === 'object' ? { ...base, ...fields } : fields;
  }
  return merged as GroupedWorkerOptions;
}
