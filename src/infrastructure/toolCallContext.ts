import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolCallInfo } from '../contract/types/tools.ts';

/**
 * One store per process, however many copies of this module are loaded: a tool file may bring its
 * own copy of yiem-agent (a tools folder with its own install, a loader that copies packages), and
 * its `currentToolCall()` must still see the call the worker's copy runs.
 */
const STORE_KEY = Symbol.for('yiem-agent.toolCall');
const shared = globalThis as { [STORE_KEY]?: AsyncLocalStorage<ToolCallInfo> };
shared[STORE_KEY] ??= new AsyncLocalStorage<ToolCallInfo>();
const storage = shared[STORE_KEY];

/** Runs a tool's `execute` with its call info available to {@link currentToolCall}. */
export function runWithToolCall<T>(info: ToolCallInfo, run: () => T): T {
  return storage.run(info, run);
}

/**
 * The tool call being executed, for tools that need their attempt number or an idempotency key.
 * Reading it through async context keeps the seed's `execute` signature for every other tool.
 *
 * @throws when called outside a tool's `execute`.
 */
export function currentToolCall(): ToolCallInfo {
  const info = storage.getStore();
  if (!info) throw new Error('currentToolCall() works only while a tool executes');
  return info;
}
