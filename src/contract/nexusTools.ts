import type { JsonSchema } from './types/base.ts';
import type { WorkflowTool } from './types/tools.ts';

/** A tool whose calls are a Temporal Nexus operation of another namespace's service. */
export interface NexusToolSpec {
  /** The name the model calls it by, e.g. `lookUpOrder`. */
  name: string;
  /** Human-readable name. Default: `<service>.<operation> (Nexus)`. */
  label?: string;
  /** What the operation does; shown to the model. */
  description: string;
  /** JSON Schema of the arguments, validated in PREPARE like any tool's; the arguments are the operation's input. */
  inputSchema: JsonSchema;
  /** The Nexus endpoint's name (`temporal operator nexus endpoint create --name ...`). */
  endpoint: string;
  /** The service's name as its handler declares it (`nexus.service('<name>', ...)`). */
  service: string;
  /** The operation's name in that service. */
  operation: string;
  /** Every call waits for a person's approval first, as for any tool. */
  requiresApproval?: boolean;
  /** The operation's end-to-end timeout (a Temporal duration string). Default: the server's maximum. */
  scheduleToCloseTimeout?: string;
  /** Whether calls may run concurrently with others in parallel mode. Default true. */
  parallelToolExecute?: boolean;
}

/**
 * A tool whose calls run a Nexus operation: the conversation's workflow schedules `operation` of
 * `service` through `endpoint` (the counterpart of `nexusOperationAsTool` in
 * `@temporalio/openai-agents`). The operation's output is the result the model reads: a string as it
 * is, anything else as JSON. A failed, timed-out or cancelled operation is an error result naming
 * the endpoint, service and operation; the turn goes on.
 */
export function nexusTool(spec: NexusToolSpec): WorkflowTool {
  const {
    label,
    endpoint,
    service,
    operation,
    requiresApproval,
    scheduleToCloseTimeout,
    parallelToolExecute,
    ...described
  } = spec;
  for (const [field, value] of Object.entries({ endpoint, service, operation })) {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new Error(`Nexus tool "${spec.name}" needs a non-empty ${field}`);
    }
  }
  return {
    ...described,
    label: label ?? `${service}.${operation} (Nexus)`,
    parallelToolExecute: parallelToolExecute ?? true,
    ...(requiresApproval ? { requiresApproval: true } : {}),
    runner: {
      kind: 'nexus',
      endpoint,
      service,
      operation,
      ...(scheduleToCloseTimeout ? { scheduleToCloseTimeout } : {}),
    },
  };
}
