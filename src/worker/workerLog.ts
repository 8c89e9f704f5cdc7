import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import { defaultDataDir } from '../infrastructure/server/temporalCli.ts';
import { installWorkerRuntime } from './runtime.ts';

const LOG_LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** The Temporal SDK's log level in a worker: `YIEM_WORKER_LOG_LEVEL`, default WARN. */
export function workerLogLevel(env: Record<string, string | undefined>): LogLevel {
  const requested = (env.YIEM_WORKER_LOG_LEVEL || 'WARN').toUpperCase();
  if (!LOG_LEVELS.includes(requested as LogLevel)) {
    throw new Error(`YIEM_WORKER_LOG_LEVEL=${requested}: expected one of ${LOG_LEVELS.join(', ')}`);
  }
  return requested as LogLevel;
}

/** A worker's log file: `<data folder>/logs/worker-<task queue>.log`, one per queue, appended to. */
export function workerLogFile(taskQueue: string, env: Record<string, string | undefined>): string {
  return path.join(defaultDataDir(env), 'logs', `worker-${taskQueue.replace(/[^\w.-]/g, '_')}.log`);
}

/**
 * The worker's log at {@link workerLogLevel}, one line per entry in the terminal and each in full in
 * `file`: the SDK's default prints a failed activity with its stack and cause chain, about thirty
 * lines per attempt, and logs its INFO lines (bundler statistics, state changes) otherwise. A
 * process that installed a Runtime of its own keeps it. Returns whether this one was installed.
 */
export function installWorkerLog(
  taskQueue: string,
  env: Record<string, string | undefined>,
  file = workerLogFile(taskQueue, env),
): boolean {
  return installWorkerRuntime({
    logger: new DefaultLogger(workerLogLevel(env), workerLogToFile(file, console.error)),
  });
}

/**
 * A log function that writes every entry to `file` in full (stack traces included) and gives `show`
 * one line per entry, which points at the file.
 */
export function workerLogToFile(file: string, show: (line: string) => void): (entry: LogEntry) => void {
  let folderMade = false;
  return (entry) => {
    // Made at the first entry: a worker that never logs leaves no folder behind.
    if (!folderMade) mkdirSync(path.dirname(file), { recursive: true });
    folderMade = true;
    appendFileSync(file, `${logFileLine(entry)}\n`);
    show(`worker ${entry.level}: ${summary(entry)} (details in ${file})`);
  };
}

function logFileLine(entry: LogEntry): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const { error, ...meta } = entry.meta ?? {};
  const stack = error instanceof Error ? `\n${error.stack ?? error.message}` : '';
  return `${time} ${entry.level} ${entry.message} ${JSON.stringify(meta)}${stack}`;
}

function summary(entry: LogEntry): string {
  const error = entry.meta?.error;
  const activity = entry.meta?.activityType;
  const what = typeof activity === 'string' ? `${entry.message} (${activity})` : entry.message;
  const cause = error instanceof Error ? error.message : undefined;
  return (cause ? `${what}: ${cause}` : what).split('\n')[0] ?? what;
}
