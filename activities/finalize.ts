import { describeThrown } from '../src/contract/thrown.ts';
import { textContent } from '../src/contract/toolResult.ts';
import type { AfterToolCallContext, AfterToolCallResult, AgentHooks } from '../src/contract/types/hooks.ts';
import type { AgentToolResult } from '../src/contract/types/tools.ts';

/**
 * FINALIZE (the seed's `finalizeExecutedToolCall`), at the end of the `executeTool` activity
 * (execute.ts), which then emits the events: `afterToolCall` may replace fields of the result. A hook that throws makes the result an
 * error naming it, as in pi-agent-core: the tool already ran, so its activity must not fail and run
 * it again.
 */
export async function finalize(
  hooks: AgentHooks,
  context: AfterToolCallContext,
): Promise<{ result: AgentToolResult; isError: boolean }> {
  let after: AfterToolCallResult | undefined;
  try {
    after = await hooks.afterToolCall?.(context);
  } catch (error) {
    return {
      result: {
        content: [textContent(`afterToolCall failed for "${context.toolName}": ${describeThrown(error)}`)],
        details: { error: describeThrown(error) },
        usage: null,
        terminate: false,
      },
      isError: true,
    };
  }
  if (!after) return { result: context.result, isError: context.isError };
  const { isError, ...replaced } = after;
  return { result: { ...context.result, ...replaced }, isError: isError ?? context.isError };
}
