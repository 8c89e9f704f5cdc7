import { createNexusServiceClient, isCancellation, log, patched } from '@temporalio/workflow';
import { DEFAULT_MAX_TOOL_RESULT_BYTES, INLINE_MESSAGE_BYTES } from '../src/contract/limits.ts';
import { toolCancelledMessage, toolErrorMessage, toolResultMessage } from '../src/contract/messages.ts';
import type { AgentActivities, PreparedToolCall } from '../src/contract/protocol.ts';
import { textContent } from '../src/contract/toolResult.ts';
import { limitToolResult } from '../src/contract/toolResultLimit.ts';
import { entryBytes } from '../src/contract/transcript.ts';
import type { ToolResultMessage } from '../src/contract/types/messages.ts';
import type { ToolRunner } from '../src/contract/types/tools.ts';
import { countActions, meteredActivities } from './actionMeter.ts';
import { failureMessage } from './activityFailure.ts';

/** Marks the runs that scheduled a Nexus tool call, a command no earlier workflow code issued. */
const NEXUS_TOOLS_PATCH = 'yiem-nexus-tools';

/** Since this patch a large Nexus result is kept by the `keepToolResult` activity, a command of its own. */
const NEXUS_KEPT_RESULTS_PATCH = 'yiem-nexus-kept-results';

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
    countActions();
    output = await client.executeOperation(operation, args as never, {
      summary,
      // A cancelled turn asks the handler to cancel and ends at once, without waiting for it.
      cancellationType: 'TRY_CANCEL',
      ...(scheduleToCloseTimeout ? { scheduleToCloseTimeout } : {}),
    });
  } catch (error) {
    if (isCancellation(error)) return toolCancelledMessage(toolCallId, toolName);
    const where = `Nexus operation "${operation}" of service "${service}" at endpoint "${endpoint}"`;
    return toolErrorMessage(
      toolCallId,
      toolName,
      `Tool "${toolName}" failed: ${where}: ${failureMessage(error)}`,
    );
  }
  const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
  const details = output === undefined ? {} : { output };
  const result = limitToolResult(
    { content: [textContent(text)], details, usage: null, terminate: false },
    DEFAULT_MAX_TOOL_RESULT_BYTES,
  );
  return toolResultMessage(toolCallId, toolName, result, false);
}

/**
 * A Nexus result as the transcript keeps it. Above the inline size it goes through the
 * `keepToolResult` activity, as an activity tool's result goes through its own activity's end: cut at
 * the worker's `maxToolResultBytes` and stored by reference, the workflow keeping its outline. Small
 * results stay inline (the workflow's cut above is the default cap). Should the activity fail for
 * good, the result stays inline, as it did before.
 */
export async function keptNexusResult(
  conversationId: string,
  turn: number,
  message: ToolResultMessage,
): Promise<ToolResultMessage> {
  if (entryBytes(message) <= INLINE_MESSAGE_BYTES || !patched(NEXUS_KEPT_RESULTS_PATCH)) return message;
  const { keepToolResult } = meteredActivities<AgentActivities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 5 },
    summary: `keep the result of ${message.toolName} · turn ${turn}`,
  });
  try {
    return await keepToolResult({ conversationId, turn, message });
  } catch (error) {
    if (!isCancellation(error)) {
      log.warn('A Nexus tool result could not be stored; the workflow keeps it inline', {
        toolCallId: message.toolCallId,
        error: failureMessage(error),
      });
    }
    return message;
  }
}
