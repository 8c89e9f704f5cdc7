import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityTool, AgentTool } from '../src/contract/types/tools.ts';

/** Milliseconds the slow tool of the parallel benchmark takes. */
export const SLOW_TOOL_MS = 200;

const done = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  details: {},
  usage: null,
  terminate: false,
});

/** The trivial tool of the overhead benchmark: answers at once, so only the loop is measured. */
export const noopTool: ActivityTool = {
  name: 'noop',
  label: 'No-op',
  description: 'Does nothing and answers "ok".',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  parallelToolExecute: true,
  execute: () => done('ok'),
};

/** {@link noopTool} declared `localActivity`: each call a local activity (sections a, b and p). */
export const noopLocalTool: ActivityTool = {
  ...noopTool,
  name: 'noopLocal',
  label: 'No-op, local activity',
  localActivity: true,
};

/** {@link noopTool} declared `batched`: a reply's calls share one `executeTools` activity (section a). */
export const noopBatchedTool: ActivityTool = {
  ...noopTool,
  name: 'noopBatched',
  label: 'No-op, batched',
  batched: true,
};

/** {@link noopTool} declared at most once: what that declaration costs a turn (scenario k). */
export const noopOnceTool: AgentTool = {
  ...noopTool,
  name: 'noopOnce',
  label: 'No-op, at most once',
  atMostOnce: true,
};

/** Waits `ms` milliseconds without progress: a batch long enough to steer into (scenario k). */
export const waitTool: AgentTool = {
  name: 'wait',
  label: 'Wait',
  description: 'Waits `ms` milliseconds and answers "ok".',
  inputSchema: {
    type: 'object',
    properties: { ms: { type: 'integer' } },
    required: ['ms'],
    additionalProperties: false,
  },
  parallelToolExecute: true,
  execute: async (_id, args, signal) => {
    await sleep(Number(args.ms), undefined, { signal });
    return done('ok');
  },
};

/** The large-content benchmark's tool: a result of `kilobytes` KB that starts with its `tag`. */
export const largeResultTool: AgentTool = {
  name: 'largeResult',
  label: 'Large result',
  description: 'Answers with `kilobytes` KB of text.',
  inputSchema: {
    type: 'object',
    properties: { kilobytes: { type: 'integer' }, tag: { type: 'string' } },
    required: ['kilobytes', 'tag'],
  },
  parallelToolExecute: true,
  execute: (_id, args) => done(largeResultText(String(args.tag), Number(args.kilobytes))),
};

/** What {@link largeResultTool} answers: `tag` and a newline, padded to `kilobytes` KB. */
export function largeResultText(tag: string, kilobytes: number): string {
  const head = `${tag}\n`;
  return head + 'r'.repeat(kilobytes * 1024 - head.length);
}

/** Sleeps 200 ms: the parallel-versus-sequential benchmark. */
export const slowTool: ActivityTool = {
  name: 'sleep200',
  label: 'Sleep 200 ms',
  description: 'Waits 200 ms and answers "ok".',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  parallelToolExecute: true,
  execute: async (_id, _args, signal) => {
    await sleep(SLOW_TOOL_MS, undefined, { signal });
    return done('ok');
  },
};

/** {@link slowTool} declared `localActivity` (sections b and p). */
export const slowLocalTool: ActivityTool = {
  ...slowTool,
  name: 'sleep200Local',
  label: 'Sleep 200 ms, local activity',
  localActivity: true,
};

/** {@link slowTool} declared `batched`: a reply's calls share one `executeTools` activity (section b). */
export const slowBatchedTool: ActivityTool = {
  ...slowTool,
  name: 'sleep200Batched',
  label: 'Sleep 200 ms, batched',
  batched: true,
};

/**
 * The crash-recovery tool: runs `ms` milliseconds, heartbeating; the benchmark kills the worker while
 * it runs. `onStart`/`onEnd` tell the worker process when an attempt starts and ends.
 */
export function crashTool(
  heartbeatTimeout: string,
  hooks: { onStart(attempt: string): void; onEnd(attempt: string): void },
): AgentTool {
  let attempts = 0;
  return {
    name: 'longTask',
    label: 'Long task',
    description: 'Works for a while and answers "ok".',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'number' } },
      required: ['ms'],
      additionalProperties: false,
    },
    parallelToolExecute: true,
    policy: {
      heartbeatTimeout,
      retry: { initialInterval: '100 milliseconds', maximumAttempts: 5 },
    },
    execute: async (toolCallId, args, signal, onPartialResult) => {
      const attempt = `${toolCallId}#${++attempts}`;
      hooks.onStart(attempt);
      const end = Date.now() + Number(args.ms);
      while (Date.now() < end) {
        onPartialResult({ remainingMs: end - Date.now() });
        await sleep(Math.min(100, end - Date.now()), undefined, { signal });
      }
      hooks.onEnd(attempt);
      return done('ok');
    },
  };
}
