import type { ActivityPolicy, ConversationOptions, ToolExecutionMode } from '../src/types.ts';
import type { ApprovalPolicy } from './approvals.ts';

/** A conversation's options with every default filled in. */
export interface ConversationSettings {
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
  model: string | undefined;
  maxModelCallsPerTurn: number;
  maxMessageBytes: number;
  modelPolicy: ActivityPolicy;
  approval: ApprovalPolicy;
  /** `undefined`: continue as new only when Temporal suggests it. */
  maxTurnsPerRun: number | undefined;
  /** The tools offered to the model; `undefined`: every registered tool. */
  tools: string[] | undefined;
}

export function resolveConversationSettings(options: ConversationOptions): ConversationSettings {
  return {
    systemPrompt: options.systemPrompt ?? '',
    toolExecution: options.toolExecution ?? 'parallel',
    model: options.model,
    maxModelCallsPerTurn: options.maxModelCallsPerTurn ?? 25,
    maxMessageBytes: options.maxMessageBytes ?? 100_000,
    tools: options.tools,
    maxTurnsPerRun: options.maxTurnsPerRun === undefined ? undefined : Math.max(1, options.maxTurnsPerRun),
    modelPolicy: {
      startToCloseTimeout: options.modelPolicy?.startToCloseTimeout ?? '2 minutes',
      heartbeatTimeout: options.modelPolicy?.heartbeatTimeout ?? '30 seconds',
      retry: {
        maximumAttempts: 5,
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '30 seconds',
        ...options.modelPolicy?.retry,
      },
    },
    approval: { timeout: options.approvalTimeout, onTimeout: options.onApprovalTimeout ?? 'deny' },
  };
}

/** Why a user message cannot be accepted, or `null` when it can. */
export function userTextProblem(text: unknown, maxBytes: number): string | null {
  if (typeof text !== 'string') return 'A message must be a string';
  if (text.trim() === '') return 'A message must not be empty';
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) return `A message may have at most ${maxBytes} bytes; this one has ${bytes}`;
  return null;
}
