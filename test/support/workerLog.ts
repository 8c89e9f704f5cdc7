import { DefaultLogger, type LogEntry, Runtime } from '@temporalio/worker';
import { beforeEach } from 'vitest';

/**
 * Set-up file of every test file: the in-process workers' warnings (the stack traces of the tool and
 * model failures tests provoke on purpose) are kept per test and printed only when that test fails.
 */
const entries: string[] = [];

Runtime.install({ logger: new DefaultLogger('WARN', (entry) => entries.push(formatEntry(entry))) });

beforeEach((context) => {
  entries.length = 0;
  context.onTestFailed(() => {
    if (entries.length > 0) console.error(`Worker log of "${context.task.name}":\n${entries.join('\n')}`);
  });
});

function formatEntry(entry: LogEntry): string {
  const { error, ...meta } = entry.meta ?? {};
  const stack = error instanceof Error ? `\n${error.stack ?? error.message}` : '';
  return `${entry.level} ${entry.message} ${JSON.stringify(meta)}${stack}`;
}
