import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { LogEntry } from '@temporalio/worker';

/**
 * A log function for a worker that shares the terminal with a chat: every entry goes to `file` in
 * full (stack traces included) and `show` gets one line per entry, which points at the file.
 */
export function workerLogToFile(file: string, show: (line: string) => void): (entry: LogEntry) => void {
  mkdirSync(path.dirname(file), { recursive: true });
  return (entry) => {
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
