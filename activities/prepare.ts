import { toolErrorMessage } from '../src/contract/messages.ts';
import type { PreparedToolCall, PrepareToolCallsInput } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { resolveToolPolicy } from '../src/contract/toolPolicy.ts';
import type { ToolArguments } from '../src/contract/types/base.ts';
import type { AgentHooks } from '../src/contract/types/hooks.ts';
import type { AgentToolCall } from '../src/contract/types/messages.ts';
import type { AgentTool } from '../src/contract/types/tools.ts';
import type { ToolRegistry } from './registry/registry.ts';
import type { ArgumentValidator } from './registry/validation.ts';
import { withCheckBudget } from './sandbox/checkBudget.ts';
import { summarizeToolCall } from './summary.ts';

export interface PrepareDependencies {
  registry: ToolRegistry;
  validator: ArgumentValidator;
  hooks: AgentHooks;
  /** Whether the server says it has no Nexus endpoint of this name (activities/nexusEndpoints.ts). */
  nexusEndpointMissing: (name: string) => Promise<boolean>;
  /** The worker's `tools.batchedTools`: whether a tool that does not say runs its calls batched. */
  batchedByDefault?: boolean;
}

/**
 * PREPARE for a whole batch (the seed's `prepareToolCall`): find each tool, prepare and validate its
 * arguments, and ask `beforeToolCall`. A call that fails any step is answered here with an error
 * result, so it never reaches an execution activity. It runs inside the `callModel` activity (see
 * createAgentActivities in index.ts), at the end of the model call whose reply asked for the tools.
 */
export async function prepareToolCalls(
  deps: PrepareDependencies,
  input: PrepareToolCallsInput,
): Promise<PreparedToolCall[]> {
  await deps.registry.refresh();
  const prepared: PreparedToolCall[] = [];
  await withCheckBudget(async () => {
    for (const call of input.toolCalls) {
      prepared.push(
        input.tools && !input.tools.includes(call.name)
          ? notOffered(call, input.tools)
          : await prepareToolCall(deps, input.conversationId, call),
      );
    }
  });
  return prepared;
}

async function prepareToolCall(
  deps: PrepareDependencies,
  conversationId: string,
  call: AgentToolCall,
): Promise<PreparedToolCall> {
  const refuse = (text: string): PreparedToolCall => ({
    kind: 'immediate',
    message: toolErrorMessage(call.id, call.name, text),
  });
  const tool = deps.registry.get(call.name);
  if (!tool) {
    return refuse(
      deps.registry.unavailableReason(call.name) ??
        `Tool "${call.name}" not found. Available tools: ${deps.registry.names().join(', ') || '(none)'}`,
    );
  }
  if (call.argumentsError) return refuse(call.argumentsError);

  let args: ToolArguments;
  try {
    args = tool.prepareArguments
      ? await tool.prepareArguments(structuredClone(call.arguments))
      : structuredClone(call.arguments);
  } catch (error) {
    return refuse(`prepareArguments of "${tool.name}" failed: ${describeThrown(error)}`);
  }

  const invalid = await validateArguments(deps.validator, tool, args);
  if (invalid) return refuse(invalid);

  let approvalReason: string | undefined = tool.requiresApproval
    ? `${tool.label || tool.name} requires approval`
    : undefined;
  try {
    const decision = await deps.hooks.beforeToolCall?.({
      conversationId,
      toolCallId: call.id,
      toolName: tool.name,
      args,
      tool,
    });
    if (decision?.block)
      return refuse(
        `Tool call "${tool.name}" was blocked: ${decision.reason ?? 'blocked by beforeToolCall'}`,
      );
    if (decision?.requireApproval) approvalReason = decision.reason ?? 'beforeToolCall asked for approval';
  } catch (error) {
    return refuse(`Tool call "${tool.name}" was blocked: beforeToolCall failed: ${describeThrown(error)}`);
  }

  if (tool.runner?.kind === 'nexus' && (await deps.nexusEndpointMissing(tool.runner.endpoint))) {
    return refuse(
      `Tool "${tool.name}" cannot run: the Temporal server has no Nexus endpoint "${tool.runner.endpoint}" ` +
        '(an operator creates it with `temporal operator nexus endpoint create`). Tell the user.',
    );
  }

  let taskQueue = tool.taskQueue;
  try {
    taskQueue = (await tool.taskQueueFor?.({ conversationId, toolCallId: call.id })) ?? taskQueue;
  } catch (error) {
    return refuse(`Tool call "${tool.name}" could not be routed: ${describeThrown(error)}`);
  }

  return {
    kind: 'ready',
    toolCallId: call.id,
    toolName: tool.name,
    args,
    parallel: tool.parallelToolExecute,
    policy: resolveToolPolicy(tool.policy, tool.localActivity === true),
    summary: summarizeToolCall(tool.name, args),
    ...(approvalReason ? { approval: { reason: approvalReason } } : {}),
    ...(taskQueue ? { taskQueue } : {}),
    ...(tool.runner ? { runner: tool.runner } : {}),
    ...(tool.atMostOnce ? { atMostOnce: true as const } : {}),
    ...(tool.localActivity ? { localActivity: true as const } : {}),
    ...(batchableCall(tool, approvalReason !== undefined, deps.batchedByDefault)
      ? { batched: true as const }
      : {}),
  };
}

/**
 * Whether a call may share an `executeTools` activity: its tool is batched (or says nothing and the
 * worker batches by default), and it runs `execute` in an activity that may run it again. A call
 * waiting for approval, an at-most-once call (its reconcile needs an attempt of its own) and a
 * local activity run alone; a tool the workflow runs has no activity to share.
 */
function batchableCall(tool: AgentTool, needsApproval: boolean, byDefault = false): boolean {
  if (tool.runner || tool.atMostOnce || tool.localActivity || needsApproval) return false;
  return tool.batched ?? byDefault;
}

/** A call of a registered tool the active agent was not given. */
function notOffered(call: AgentToolCall, offered: string[]): PreparedToolCall {
  const available = offered.join(', ') || '(none)';
  return {
    kind: 'immediate',
    message: toolErrorMessage(
      call.id,
      call.name,
      `Tool "${call.name}" not found. Available tools: ${available}`,
    ),
  };
}

/** The tool's own `validateRequiredArgs` when it has one, else the full JSON Schema. */
async function validateArguments(
  validator: ArgumentValidator,
  tool: AgentTool,
  args: ToolArguments,
): Promise<string | null> {
  try {
    if (!tool.validateRequiredArgs) return validator.validate(tool.name, tool.inputSchema, args);
    const problem = await tool.validateRequiredArgs(args);
    if (!problem) return null;
    return `Invalid arguments for tool "${tool.name}": ${problem}\nReceived arguments: ${JSON.stringify(args)}`;
  } catch (error) {
    return `Could not validate the arguments of tool "${tool.name}": ${describeThrown(error)}`;
  }
}
