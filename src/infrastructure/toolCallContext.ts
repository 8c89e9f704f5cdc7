import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolCallInfo } from '../contract/types/tools.ts';

const storage = new AsyncLocalStorage<ToolCallInfo>();

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
