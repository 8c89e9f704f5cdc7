/**
 * The public contract of yiem-agent: tools, their results, hooks, events and transcript messages.
 *
 * A barrel: each subject lives in its own file under `types/`, in layers, each importing only lower
 * ones (`CONTRACT_TYPE_LAYERS` in `.dependency-cruiser.cjs` holds the order, which lint checks):
 *
 * 0. `base`: JSON Schema, tool arguments, text content, usage, activity policy
 * 1. `spend`, `models`, `approvals`, `callbacks`, `sandbox`, `mcp`, `evals`
 * 2. `messages` (with `GuardrailMark`, which every message carries)
 * 3. `guardrails`, `compaction`
 * 4. `agents`, `turns`
 * 5. `tools` (a workflow tool's runner names an `AgentDefinition`)
 * 6. `hooks`, `events` ("The event vocabulary"), `conversation`
 *
 * The package's entry (`src/index.ts`) re-exports this file, so the public names stay one list; code
 * inside the project imports the subject file it needs.
 */
export type * from './types/agents.ts';
export type * from './types/approvals.ts';
export type * from './types/base.ts';
export type * from './types/callbacks.ts';
export type * from './types/compaction.ts';
export type * from './types/conversation.ts';
export type * from './types/evals.ts';
export type * from './types/events.ts';
export type * from './types/guardrails.ts';
export type * from './types/hooks.ts';
export type * from './types/mcp.ts';
export type * from './types/messages.ts';
export type * from './types/models.ts';
export type * from './types/sandbox.ts';
export type * from './types/spend.ts';
export type * from './types/tools.ts';
export type * from './types/turns.ts';
