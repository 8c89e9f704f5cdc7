import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { describeThrown } from '../../contract/thrown.ts';
import { defaultDataDir, ensureTemporalCli } from './temporalCli.ts';

export type SearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

/** Search attributes yiem's workflows write; registered on every server started by {@link startDevServer}. */
export const YIEM_SEARCH_ATTRIBUTES = {
  YiemStatus: 'Keyword',
  YiemTurns: 'Int',
  YiemAgent: 'Keyword',
  YiemForkedFrom: 'Keyword',
  YiemCost: 'Double',
} as const satisfies Record<string, SearchAttributeType>;

/**
 * Dynamic config every server started here gets unless `dynamicConfig` overrides it.
 *
 * `history.transferProcessorMaxPollRPS` (20 by default) caps how often a history shard loads new
 * transfer tasks (dispatching workflow and activity tasks). The dev server has one shard, so every
 * step of every conversation waited for the next of those 50 ms slots: a tool call took about 54 ms
 * instead of 17 ms. Its purpose is to protect a shared database from idle polling, which a dev
 * server's own SQLite file does not need.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  // Worker heartbeats and ListWorkers tell a stopped worker from a running one within seconds
  // (workerLiveness.ts). Server 1.32 has them on; kept on here as in the compose stack's config.
  'frontend.WorkerHeartbeatsEnabled': true,
  'frontend.ListWorkersEnabled': true,
};

export interface DevServerOptions {
  /** State directory. Default: `$YIEM_DATA_DIR`, else `.yiem` in the current directory. Created if missing. */
  dataDir?: string;
  /** gRPC port. Default 7233; 0 picks a free port. */
  port?: number;
  /** Web UI port. Default `port + 1000`, or a free port when `port` is 0; 0 picks a free port. */
  uiPort?: number;
  /** Run without the Web UI. */
  headless?: boolean;
  /** SQLite file holding all server state. Default: `<dataDir>/temporal.db`. */
  dbFile?: string;
  /** Search attributes to make sure exist in `namespace`. Default: {@link YIEM_SEARCH_ATTRIBUTES}. */
  searchAttributes?: Record<string, SearchAttributeType>;
  /** Namespace to create (if needed) and report. Default: `default`. */
  namespace?: string;
  /** Receives every line the server prints. */
  log?: (line: string) => void;
  /** How long to wait for the server to answer before giving up. Default 60000. */
  readyTimeoutMs?: number;
  /**
   * Server dynamic config, e.g. `{ 'limit.historyCount.suggestContinueAsNew': 50 }`; values are
   * passed as JSON, over {@link DEV_SERVER_DYNAMIC_CONFIG}.
   */
  dynamicConfig?: Record<string, unknown>;
  /** The `temporal` binary to run. Default: found or installed by `ensureTemporalCli({ dataDir })`. */
  cliPath?: string;
  /** Serve the server's Prometheus metrics on this port (0 picks a free one). Default: none. */
  metricsPort?: number;
}

export interface DevServer {
  /** gRPC address, `127.0.0.1:<port>`. */
  address: string;
  /** Web UI URL, or `undefined` when headless. */
  uiUrl: string | undefined;
  namespace: string;
  /** Absolute path of the SQLite file. */
  dbFile: string;
  /** The Prometheus metrics URL, when `metricsPort` was given. */
  metricsUrl: string | undefined;
  pid: number;
  process: ChildProcess;
  /** SIGTERM, wait for exit; SIGKILL if still running after 10 s. */
  stop(): Promise<void>;
  /** Send a signal (default SIGKILL) without waiting, to simulate a crash; `stop()` then waits for the exit. */
  kill(signal?: NodeJS.Signals): void;
}

const DEFAULT_PORT = 7233;
const UI_PORT_OFFSET = 1000;
const DEFAULT_READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const OUTPUT_TAIL_LINES = 20;
const POLL_INTERVAL_MS = 200;
const PROBE_TIMEOUT_MS = 2_000;
const HOST = '127.0.0.1';
/** Starts on freshly picked ports after a port was taken between picking and binding. */
const PORT_ATTEMPTS = 5;

// Proto enum temporal.api.enums.v1.IndexedValueType; @temporalio/proto is not a direct dependency.
const INDEXED_VALUE_TYPES: Record<SearchAttributeType, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/**
 * Starts `temporal server start-dev` with SQLite persistence and resolves once the namespace answers
 * and the search attributes are registered. Restarting on an existing `dbFile` keeps all state.
 *
 * @throws if the binary cannot be found or installed, the server exits before it is ready (the error
 * carries the last lines of its output), it does not answer within `readyTimeoutMs`, or an existing
 * search attribute has a different type than requested.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const dataDir = path.resolve(options.dataDir ?? defaultDataDir());
  const dbFile = path.resolve(options.dbFile ?? path.join(dataDir, 'temporal.db'));
  const namespace = options.namespace ?? 'default';
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  await mkdir(dataDir, { recursive: true });
  await mkdir(path.dirname(dbFile), { recursive: true });

  const cliPath = options.cliPath ?? (await ensureTemporalCli({ dataDir, log: options.log }));
  // Ports picked free can be taken by someone else before the server binds them (parallel tests):
  // then the server is started again on new ones.
  const picksPorts = options.port === 0 || options.uiPort === 0 || options.metricsPort === 0;
  for (let attempt = 1; ; attempt++) {
    const port = await resolvePort(options.port ?? DEFAULT_PORT);
    const uiPort = options.headless ? undefined : await resolveUiPort(options, port);
    const metricsPort =
      options.metricsPort === undefined ? undefined : await resolvePort(options.metricsPort);
    try {
      return await launchDevServer({
        options,
        cliPath,
        dbFile,
        namespace,
        readyTimeoutMs,
        port,
        uiPort,
        metricsPort,
      });
    } catch (error) {
      const portTaken = /address already in use/.test(describeThrown(error));
      if (!picksPorts || !portTaken || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

async function launchDevServer(launch: {
  options: DevServerOptions;
  cliPath: string;
  dbFile: string;
  namespace: string;
  readyTimeoutMs: number;
  port: number;
  uiPort: number | undefined;
  metricsPort: number | undefined;
}): Promise<DevServer> {
  const { options, cliPath, dbFile, namespace, readyTimeoutMs, port, uiPort, metricsPort } = launch;
  const args = startDevArgs({
    dbFile,
    port,
    uiPort,
    namespace,
    dynamicConfig: { ...DEV_SERVER_DYNAMIC_CONFIG, ...options.dynamicConfig },
  });
  if (metricsPort !== undefined) args.push('--metrics-port', String(metricsPort));

  const child = spawn(cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = waitForExit(child);
  const output = captureOutput(child, options.log);
  const killOnParentExit = () => child.kill('SIGKILL');
  process.once('exit', killOnParentExit);
  const address = `${HOST}:${port}`;
  const deadline = Date.now() + readyTimeoutMs;

  try {
    await waitUntilReadyOrExited(address, namespace, readyTimeoutMs, exited, output, cliPath);
    const remainingMs = Math.max(deadline - Date.now(), PROBE_TIMEOUT_MS);
    await registerSearchAttributes(
      address,
      namespace,
      options.searchAttributes ?? YIEM_SEARCH_ATTRIBUTES,
      dbFile,
      remainingMs,
    );
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    process.off('exit', killOnParentExit);
    throw error;
  }

  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://${HOST}:${uiPort}`,
    namespace,
    dbFile,
    metricsUrl: metricsPort === undefined ? undefined : `http://${HOST}:${metricsPort}/metrics`,
    pid: child.pid as number,
    process: child,
    async stop() {
      await stopProcess(child, exited);
      process.off('exit', killOnParentExit);
    },
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      child.kill(signal);
    },
  };
}

/**
 * Polls `address` until the Temporal frontend describes `namespace`.
 *
 * @throws if it does not answer within `timeoutMs` or `signal` is aborted.
 */
export async function waitForServer(
  address: string,
  timeoutMs: number,
  options: { namespace?: string; signal?: AbortSignal } = {},
): Promise<void> {
  const namespace = options.namespace ?? 'default';
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    options.signal?.throwIfAborted();
    try {
      await describeNamespaceOnce(address, namespace, Math.min(PROBE_TIMEOUT_MS, deadline - Date.now()));
      return;
    } catch (error) {
      lastError = error;
    }
    await sleep(POLL_INTERVAL_MS);
  }
  const reason = describeThrown(lastError);
  throw new Error(
    `Temporal server at ${address} did not answer within ${timeoutMs} ms (last error: ${reason})`,
  );
}

/** Asks the OS for a currently free TCP port on 127.0.0.1. */
export function getFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function resolvePort(port: number): Promise<number> {
  return port === 0 ? getFreePort() : Promise.resolve(port);
}

function resolveUiPort(options: DevServerOptions, port: number): Promise<number> {
  if (options.uiPort !== undefined) return resolvePort(options.uiPort);
  // A random gRPC port plus 1000 may be taken or beyond 65535, so a random gRPC port gets a random UI port.
  return options.port === 0 ? getFreePort() : Promise.resolve(port + UI_PORT_OFFSET);
}

function startDevArgs(opts: {
  dbFile: string;
  port: number;
  uiPort: number | undefined;
  namespace: string;
  dynamicConfig: Record<string, unknown>;
}) {
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    opts.dbFile,
    '--ip',
    HOST,
    '--port',
    String(opts.port),
    // WAL lets visibility queries read while history is being written, instead of blocking on the db lock.
    '--sqlite-pragma',
    'journal_mode=wal',
    // With WAL this syncs at checkpoints instead of every commit: a killed server loses nothing, only
    // a power cut can lose the last commits. About 3 ms less per workflow step (bench/TUNING.md).
    '--sqlite-pragma',
    'synchronous=normal',
    '--log-level',
    'warn',
  ];
  args.push(...(opts.uiPort === undefined ? ['--headless'] : ['--ui-port', String(opts.uiPort)]));
  if (opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const [key, value] of Object.entries(opts.dynamicConfig)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}

function waitForExit(child: ChildProcess): Promise<ExitStatus> {
  return new Promise((resolve) => {
    // 'close' rather than 'exit': it fires after the output pipes are drained, so the tail is complete.
    child.once('close', (code, signal) => resolve({ code, signal }));
    // A binary that cannot be spawned (missing, not executable) is reported through 'error' instead.
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
}

/** Keeps the last lines of stdout+stderr for error messages and forwards every line to `log`. */
function captureOutput(child: ChildProcess, log: ((line: string) => void) | undefined): string[] {
  const tail: string[] = [];
  // Both pipes must be drained for the server's whole life, or it blocks once a pipe buffer fills.
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
      log?.(line);
    });
  }
  return tail;
}

async function waitUntilReadyOrExited(
  address: string,
  namespace: string,
  timeoutMs: number,
  exited: Promise<ExitStatus>,
  output: string[],
  cliPath: string,
): Promise<void> {
  const stopPolling = new AbortController();
  const ready = waitForServer(address, timeoutMs, { namespace, signal: stopPolling.signal }).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const outcome = await Promise.race([ready, exited.then((status) => ({ status }))]);
  stopPolling.abort();
  if (outcome === undefined) return;
  if ('status' in outcome) {
    throw new Error(
      `Temporal dev server (${cliPath}) ${describeExit(outcome.status)} before it was ready.${formatTail(output)}`,
    );
  }
  const reason = describeThrown(outcome.error);
  throw new Error(`Temporal dev server did not become ready; it was killed. ${reason}${formatTail(output)}`);
}

function describeExit(status: ExitStatus): string {
  if (status.error) return `could not be started (${status.error.message})`;
  return status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
}

function formatTail(output: string[]): string {
  return output.length ? `\nLast server output:\n${output.join('\n')}` : '';
}

/** Runs `fn` on a fresh connection that is closed afterwards, all within `timeoutMs`. */
async function withConnection<T>(
  address: string,
  timeoutMs: number,
  fn: (connection: Connection) => Promise<T>,
): Promise<T> {
  // Connection.connect() leaves its channel open when connecting fails, so connect lazily and always close.
  const connection = Connection.lazy({ address, connectTimeout: timeoutMs });
  try {
    await connection.ensureConnected();
    return await connection.withDeadline(Date.now() + timeoutMs, () => fn(connection));
  } finally {
    await connection.close();
  }
}

async function describeNamespaceOnce(address: string, namespace: string, timeoutMs: number): Promise<void> {
  await withConnection(address, timeoutMs, (connection) =>
    connection.workflowService.describeNamespace({ namespace }),
  );
}

/**
 * Adds the missing search attributes through the operator API. The CLI's `--search-attribute` flag is
 * not used because it only applies when a namespace is first created, so it is silently ignored when
 * restarting on an existing database.
 */
async function registerSearchAttributes(
  address: string,
  namespace: string,
  wanted: Record<string, SearchAttributeType>,
  dbFile: string,
  timeoutMs: number,
): Promise<void> {
  if (Object.keys(wanted).length === 0) return;
  await withConnection(address, timeoutMs, async (connection) => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing: Record<string, number> = {};
    for (const [name, type] of Object.entries(wanted)) {
      const existing = customAttributes[name];
      if (existing === undefined) {
        missing[name] = INDEXED_VALUE_TYPES[type];
      } else if (existing !== INDEXED_VALUE_TYPES[type]) {
        throw new Error(
          `Search attribute ${name} is registered as ${typeName(existing)} in namespace "${namespace}" of ${dbFile}, ` +
            `but ${type} is required. Use a different database file or remove ${dbFile} to start fresh.`,
        );
      }
    }
    if (Object.keys(missing).length > 0) {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    }
  });
}

function typeName(indexedValueType: number): string {
  const entry = Object.entries(INDEXED_VALUE_TYPES).find(([, value]) => value === indexedValueType);
  return entry ? entry[0] : `type #${indexedValueType}`;
}

async function stopProcess(child: ChildProcess, exited: Promise<ExitStatus>): Promise<void> {
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
