import type { AgentDefinition } from './types/agents.ts';
import type { JsonSchema } from './types/base.ts';
import type { WorkflowTool } from './types/tools.ts';

/** How long a callback tool waits for a client unless it says otherwise. */
export const DEFAULT_CALLBACK_TIMEOUT = '2 minutes';

/**
 * A tool that delegates a task to another agent: each call runs as a child conversation workflow with
 * the agent's own system prompt, tools and model, and the agent's final reply is the tool result.
 * Calls run in parallel in parallel mode; cancelling the turn cancels them.
 */
export function agentTool(
  agent: AgentDefinition,
  options: { label?: string; requiresApproval?: boolean } = {},
): WorkflowTool {
  return {
    name: agent.name,
    label: options.label ?? `Agent ${agent.name}`,
    description: agent.description,
    inputSchema: {
      type: 'object',
      properties: { task: { type: 'string', minLength: 1, description: `What ${agent.name} should do` } },
      required: ['task'],
      additionalProperties: false,
    },
    parallelToolExecute: true,
    ...(options.requiresApproval ? { requiresApproval: true } : {}),
    runner: { kind: 'subAgent', agent },
  };
}

/** The name of the tool that hands a conversation to `agent`. */
export function handoffToolName(agent: Pick<AgentDefinition, 'name'>): string {
  return `transfer_to_${agent.name}`;
}

/**
 * A tool that hands the conversation to another agent: from the next model call on (in this turn
 * and later ones) the model gets the agent's system prompt, tools and model. List another agent's
 * handoff tool among an agent's `tools` to let it hand the conversation on or back.
 */
export function handoffTool(agent: AgentDefinition): WorkflowTool {
  return {
    name: handoffToolName(agent),
    label: `Hand off to ${agent.name}`,
    description: `Hand the conversation to ${agent.name}: ${agent.description}`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    parallelToolExecute: false,
    runner: { kind: 'handoff', agent },
  };
}

/** A tool declared by the worker and run by an attached client (see `Conversation.serveCallbacks`). */
export interface CallbackToolSpec {
  /** The name the model calls it by, and the client's handler is registered under. */
  name: string;
  /** Its human-readable name. */
  label: string;
  /** What it does; shown to the model. */
  description: string;
  /** JSON Schema of the arguments, checked before a client is asked. */
  inputSchema: JsonSchema;
  /** JSON Schema of the client's `output`; a result that does not match reaches the model as an error. */
  outputSchema?: JsonSchema;
  /** How long the call waits for a client (a Temporal duration string). Default 2 minutes. */
  timeout?: string;
  /** When true, a person approves each call before a client runs it. Default false. */
  requiresApproval?: boolean;
  /** Whether calls may run alongside others in parallel mode. Default true. */
  parallelToolExecute?: boolean;
}

/** A tool with a schema and no body: the workflow waits durably for a client to run it. */
export function callbackTool(spec: CallbackToolSpec): WorkflowTool {
  const { outputSchema, timeout, requiresApproval, parallelToolExecute, ...described } = spec;
  return {
    ...described,
    parallelToolExecute: parallelToolExecute ?? true,
    ...(requiresApproval ? { requiresApproval: true } : {}),
    runner: {
      kind: 'callback',
      timeout: timeout ?? DEFAULT_CALLBACK_TIMEOUT,
      ...(outputSchema ? { outputSchema } : {}),
    },
  };
}
