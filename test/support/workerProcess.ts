import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
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
