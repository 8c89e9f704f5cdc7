import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import { workerBeats } from '../../src/infrastructure/workerLiveness.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { workflowBundle } from './agentHarness.ts';
import { TSX_LOADER } from './cli.ts';
import { SOURCE_CONDITION_FLAG } from './sourceCondition.ts';

const ENTRY = fileURLToPath(new URL('./markerWorker.ts', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

/** What crash tests share: a directory for markers and the workflow bundle on disk. */
export interface CrashBench {
  markerDir: string;
  bundlePath: string;
  /** Lets every waiting `step` tool finish. */
  release(): Promise<void>;
  /** Marker files written so far (`<toolCallId>.<attempt>.<worker>.json`). */
  markers(): Promise<string[]>;
  /** Deletes the directory. */
  remove(): Promise<void>;
}

export async function createCrashBench(): Promise<CrashBench> {
  const markerDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-crash-'));
  const bundlePath = path.join(markerDir, 'workflows.bundle.js');
  await writeFile(bundlePath, (await workflowBundle()).code);
  return {
    markerDir,
    bundlePath,
    release: () => writeFile(path.join(markerDir, 'release'), ''),
    markers: async () => (await readdir(markerDir)).filter((file) => file.endsWith('.json')).sort(),
    remove: () => rm(markerDir, { recursive: true, force: true }),
  };
}

/** An agent worker in its own process (markerWorker.ts), so a test can SIGKILL it. */
export interface WorkerProcess {
  name: string;
  process: ChildProcess;
  /** SIGKILL: no shutdown, no goodbye to the server; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM and wait: the worker shuts down cleanly. */
  stop(): Promise<void>;
}

export async function startWorkerProcess(options: {
  name: string;
  bench: CrashBench;
  address: string;
  taskQueue: string;
  modelBaseURL: string;
  /** Another worker script than markerWorker.ts; it prints `ready` once it runs. */
  entry?: string;
  /** More environment for the worker script. */
  env?: Record<string, string>;
  /** The worker's working directory. Default: this process's. */
  cwd?: string;
}): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [SOURCE_CONDITION_FLAG, '--import', TSX_LOADER, options.entry ?? ENTRY],
    {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: {
        ...process.env,
        ...options.env,
        TEMPORAL_ADDRESS: options.address,
        YIEM_TASK_QUEUE: options.taskQueue,
        MODEL_BASE_URL: options.modelBaseURL,
        MARKER_DIR: options.bench.markerDir,
        WORKFLOW_BUNDLE: options.bench.bundlePath,
        WORKER_NAME: options.name,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker ${options.name} not ready in time`)),
      READY_TIMEOUT_MS,
    );
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line === 'ready') {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${options.name} exited with ${code} before it was ready`));
    });
  });
  const signal = async (name: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { name: options.name, process: child, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}

const SDK_HEARTBEAT_INTERVAL_MS = 60_000;

/**
 * Resolves once the server has two heartbeats of a running worker of `taskQueue`: the first does
 * not say their interval, so a worker killed before its second is told stopped only by its last
 * poll (70 s); after it, within a few intervals.
 */
export async function untilHeartbeatsKnown(
  address: string,
  taskQueue: string,
  timeoutMs = 30_000,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    for (const deadline = Date.now() + timeoutMs; ; ) {
      const beats = await workerBeats(connection.workflowService, 'default', taskQueue);
      if (
        [...(beats?.values() ?? [])].some(
          (beat) => !beat.stopped && beat.intervalMs < SDK_HEARTBEAT_INTERVAL_MS,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`no worker of ${taskQueue} sent two heartbeats in time`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await connection.close();
  }
}

/** What a crash test's cases share: one model server and client, and per case a bench and task queue. */
export interface CrashScene {
  readonly model: ScriptedModel;
  readonly client: AgentClient;
  /** The current case's bench, made by `startConversation`. */
  readonly bench: CrashBench;
  /** The current case's task queue, made by `startConversation`. */
  readonly taskQueue: string;
  /** The current case's workers, in the order they were started. */
  readonly workers: readonly WorkerProcess[];
  /** A worker process on the current case's task queue; killed after the case. */
  startWorker(
    name: string,
    options?: { entry?: string; env?: Record<string, string>; cwd?: string },
  ): Promise<WorkerProcess>;
  /**
   * A fresh bench and task queue, then a conversation on it whose model calls are retried within
   * seconds of their worker's death (heartbeats) rather than after the start-to-close timeout.
   * `prepare` runs between the two, for files the case's workers read; `modelAttempts` is its model
   * calls' `maximumAttempts` (default the conversation's, 5).
   */
  startConversation(
    id: string,
    options: { systemPrompt: string; prepare?: (bench: CrashBench) => Promise<void>; modelAttempts?: number },
  ): Promise<Conversation>;
}

/**
 * Registers the hooks of a crash test (call it in a `describe`): the model server and client for
 * the file, and after each case its workers killed, its bench removed and the model's script reset.
 */
export function useCrashScene(queuePrefix: string): CrashScene {
  const address = inject('temporalAddress');
  let model: ScriptedModel | undefined;
  let client: AgentClient | undefined;
  let bench: CrashBench | undefined;
  let taskQueue: string | undefined;
  const workers: WorkerProcess[] = [];
  const defined = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the crash scene has no ${what} yet`);
    return value;
  };

  beforeAll(async () => {
    model = await startScriptedModel();
    client = new AgentClient({ address });
  });
  afterAll(async () => {
    await client?.close();
    await model?.close();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    await bench?.remove();
    model?.reset();
  });

  const scene: CrashScene = {
    get model() {
      return defined(model, 'model server');
    },
    get client() {
      return defined(client, 'client');
    },
    get bench() {
      return defined(bench, 'bench');
    },
    get taskQueue() {
      return defined(taskQueue, 'task queue');
    },
    workers,
    startWorker: async (name, options = {}) => {
      const worker = await startWorkerProcess({
        name,
        bench: scene.bench,
        address,
        taskQueue: scene.taskQueue,
        modelBaseURL: scene.model.baseURL,
        ...options,
      });
      workers.push(worker);
      return worker;
    },
    startConversation: async (id, { systemPrompt, prepare, modelAttempts }) => {
      taskQueue = `${queuePrefix}-${randomUUID()}`;
      bench = await createCrashBench();
      await prepare?.(bench);
      // Crash cases start their conversation before any worker runs: no check that one polls.
      const scoped = new AgentClient({ client: scene.client.client, taskQueue, checkWorkers: false });
      return scoped.startConversation({
        id: `${id}-${randomUUID()}`,
        systemPrompt,
        modelPolicy: {
          startToCloseTimeout: '2 minutes',
          heartbeatTimeout: '2 seconds',
          retry: {
            initialInterval: '100 milliseconds',
            ...(modelAttempts ? { maximumAttempts: modelAttempts } : {}),
          },
        },
      });
    },
  };
  return scene;
}
