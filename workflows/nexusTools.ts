import { NexusOperationFailure } from '@temporalio/common';
import { createNexusServiceClient, isCancellation, patched, TimeoutFailure } from '@temporalio/workflow';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import { toolCancelledMessage, toolErrorMessage, toolResultMessage } from '../src/contract/messages.ts';
import type { PreparedToolCall } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { textContent } from '../src/contract/toolResult.ts';
import { limitToolResult } from '../src/contract/toolResultLimit.ts';
import type { ToolResultMessage, ToolRunner } from '../src/contract/types.ts';

/** Marks the runs that scheduled a Nexus tool call, a command no earlier workflow code issued. */
const NEXUS_TOOLS_PATCH = 'yiem-nexus-tools';

type ReadyCall = Extract<PreparedToolCall, { kind: 'ready' }>;
type NexusRunner = Extract<ToolRunner, { kind: 'nexus' }>;
type ServiceDefinition = Parameters<typeof createNexusServiceClient>[0]['service'];

/**
 * A Nexus tool's call: the workflow schedules the operation through its endpoint with the call's
 * arguments as input, and its output becomes the result. A failure (the handler's error, a timeout,
 * an unknown endpoint, service or operation) is an error result that names all three, so the model
 * and whoever reads the transcript know which service to look at. The tool batch publishes
 * `toolStart`/`toolEnd`.
 */
export async function runNexusOperation(call: ReadyCall, runner: NexusRunner): Promise<ToolResultMessage> {
  patched(NEXUS_TOOLS_PATCH);
  const { toolCallId, toolName, args, summary } = call;
  const { endpoint, service, operation, scheduleToCloseTimeout } = runner;
  // The caller knows the operation by name only: the input and output are the tool's JSON.
  const definition = { name: service, operations: { [operation]: { name: operation } } };
  const client = createNexusServiceClient({
    endpoint,
    service: definition as unknown as ServiceDefinition,
  });
  let output: unknown;
  try {
    output = await client.executeOperation(operation, args as never, {
      summary,
      // A cancelled turn asks the handler to cancel and ends at once, without waiting for it.
      cancellationType: 'TRY_CANCEL',
      ...(scheduleToCloseTimeout ? { scheduleToCloseTimeout } : {}),
    });
  } catch (error) {
    if (isCancellation(error)) return toolCancelledMessage(toolCallId, toolName);
    const where = `Nexus operation "${operation}" of service "${service}" at endpoint "${endpoint}"`;
    return toolErrorMessage(toolCallId, toolName, `Tool "${toolName}" failed: ${where}: ${why(error)}`);
  }
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
  const details = output === undefined ? {} : { output };
  const result = limitToolResult(
    { content: [textContent(text)], details, usage: null, terminate: false },
    DEFAULT_MAX_TOOL_RESULT_BYTES,
  );
  return toolResultMessage(toolCallId, toolName, result, false);
}

/** What went wrong, from the innermost cause: the handler's own message, not the Nexus wrappers. */
function why(error: unknown): string {
  let cause: unknown = error;
  while (
    cause instanceof Error &&
    cause.cause &&
    (cause instanceof NexusOperationFailure || isHandlerError(cause))
  ) {
    cause = cause.cause;
  }
  if (cause instanceof TimeoutFailure) return `timed out (${cause.timeoutType})`;
  return describeThrown(cause);
}

/** A Nexus handler error wraps the handler's failure (nexus-rpc's `HandlerError`, known by name here). */
function isHandlerError(error: Error): boolean {
  return error.name === 'HandlerError';
}
