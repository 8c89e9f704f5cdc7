import { budgetProblem } from './budget.ts';
import { DEFAULT_COMPACTION_PROMPT, DEFAULT_KEEP_RECENT_TURNS } from './compaction.ts';
import { recordedToolsProblem } from './evals.ts';
import { guardrailNamesProblem } from './guardrails.ts';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  MAX_MESSAGE_BYTES_LIMIT,
  MAX_MESSAGE_KEY_CHARS,
  SHOWN_OPTION_CHARS,
} from './limits.ts';
import { refusedPayloadReason } from './refusedPayload.ts';
import { truncate } from './truncate.ts';
import type { ActivityPolicy } from './types/base.ts';
import type { CompactionOptions } from './types/compaction.ts';
import type { ConversationOptions, ToolExecutionMode } from './types/conversation.ts';
import type { RecordedTools } from './types/evals.ts';
import type { GuardrailNames } from './types/guardrails.ts';
import type { MessageDelivery } from './types/messages.ts';
import type { ModelCallPolicy } from './types/models.ts';
import { utf8Bytes } from './utf8.ts';

/** A conversation's options with every default filled in. */
/** How long a tool call waits for a person, and what happens when nobody answers. */
export interface ApprovalPolicy {
  timeout: string | undefined;
  onTimeout: 'approve' | 'deny';
}

export interface ConversationSettings {
  systemPrompt: string;
  toolExecution: ToolExecutionMode;
  model: string | undefined;
  maxModelCallsPerTurn: number;
  maxMessageBytes: number;
  modelPolicy: ModelCallPolicy;
  approval: ApprovalPolicy;
  /** `undefined`: continue as new only when Temporal suggests it. */
  maxTurnsPerRun: number | undefined;
  /** The tools offered to the model; `undefined`: every registered tool. */
  tools: string[] | undefined;
  /** `false`: older turns are left out of a full window instead of summarised. */
  compaction: CompactionSettings | false;
  /** The worker's guardrails that apply, by stage; `undefined`: none. */
  guardrails: GuardrailNames | undefined;
  /** An eval's recorded tool results; `undefined`: tools run. */
  recordedTools: RecordedTools | undefined;
}

/** `CompactionOptions` with every default filled in. */
export interface CompactionSettings {
  model: string | undefined;
  prompt: string;
  keepRecentTurns: number;
  /** `undefined`: the window the worker reports. */
  maxContextBytes: number | undefined;
  policy: ActivityPolicy;
}

export function resolveConversationSettings(options: ConversationOptions): ConversationSettings {
  const modelPolicy: ActivityPolicy = {
    startToCloseTimeout: options.modelPolicy?.startToCloseTimeout ?? '2 minutes',
    heartbeatTimeout: options.modelPolicy?.heartbeatTimeout ?? '30 seconds',
    retry: {
      maximumAttempts: 5,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      ...options.modelPolicy?.retry,
    },
  };
  const settings: Omit<ConversationSettings, 'compaction'> = {
    guardrails: options.guardrails,
    recordedTools: options.recordedTools,
    systemPrompt: options.systemPrompt ?? '',
    toolExecution: options.toolExecution ?? 'parallel',
    model: options.model,
    maxModelCallsPerTurn: options.maxModelCallsPerTurn ?? 25,
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    tools: options.tools,
    maxTurnsPerRun: options.maxTurnsPerRun === undefined ? undefined : Math.max(1, options.maxTurnsPerRun),
    modelPolicy: {
      ...modelPolicy,
      ...(options.modelPolicy?.localActivity === true ? { localActivity: true } : {}),
    },
    approval: { timeout: options.approvalTimeout, onTimeout: options.onApprovalTimeout ?? 'deny' },
  };
  // The summarising call is always an activity: it takes the timeouts and retries alone.
  return { ...settings, compaction: resolveCompaction(options.compaction, modelPolicy) };
}

function resolveCompaction(
  options: CompactionOptions | false | undefined,
  modelPolicy: ActivityPolicy,
): CompactionSettings | false {
  if (options === false) return false;
  return {
    model: options?.model,
    prompt: options?.prompt ?? DEFAULT_COMPACTION_PROMPT,
    keepRecentTurns: options?.keepRecentTurns ?? DEFAULT_KEEP_RECENT_TURNS,
    maxContextBytes: options?.maxContextBytes,
    policy: options?.policy ?? modelPolicy,
  };
}

/**
 * How long a worker may hold one of a conversation's workflow tasks. A worker that dies holding one
 * delays its conversation by this much (Temporal's default is 10 s); conversation workflow tasks do
 * no I/O and finish in milliseconds, so a short timeout costs nothing.
 */
export const CONVERSATION_WORKFLOW_TASK_TIMEOUT = '2 seconds';

/** Why the conversation cannot start with `options`, in one line, or `null` when it can. */
export function conversationOptionsProblem(options: unknown): string | null {
  const refused = refusedPayloadReason(options);
  if (refused) return refused;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return 'Invalid conversation options: they must be an object such as { systemPrompt: "..." }';
  }
  const given = options as Record<string, unknown>;
  const problems: string[] = [];
  const check = (field: string, valid: (value: unknown) => boolean, expected: string): void => {
    const value = given[field];
    if (value !== undefined && !valid(value))
      problems.push(`${field} must be ${expected}, got ${shown(value)}`);
  };
  const isName = (value: unknown) => typeof value === 'string' && value.trim() !== '';
  const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 1;
  check(
    'systemPrompt',
    (value) => typeof value === 'string' && utf8Bytes(value) <= MAX_MESSAGE_BYTES_LIMIT,
    `a string of at most ${MAX_MESSAGE_BYTES_LIMIT} bytes`,
  );
  check(
    'toolExecution',
    (value) => value === 'sequential' || value === 'parallel',
    '"sequential" or "parallel"',
  );
  check('model', isName, 'a model name');
  check('maxModelCallsPerTurn', isCount, 'a whole number of at least 1');
  check(
    'maxMessageBytes',
    (value) => isCount(value) && (value as number) <= MAX_MESSAGE_BYTES_LIMIT,
    `a whole number from 1 to ${MAX_MESSAGE_BYTES_LIMIT}`,
  );
  check('maxTurnsPerRun', isCount, 'a whole number of at least 1');
  check('tools', (value) => Array.isArray(value) && value.every(isName), 'a list of tool names');
  check('approvalTimeout', isName, "a duration such as '10 minutes'");
  check('onApprovalTimeout', (value) => value === 'approve' || value === 'deny', '"approve" or "deny"');
  const budget = given.budget === undefined ? null : budgetProblem(given.budget);
  if (budget) problems.push(`budget: ${budget}`);
  check(
    'compaction',
    (value) => value === false || compactionOptionsProblem(value) === null,
    compactionExpected(given.compaction),
  );
  const guardrails = given.guardrails === undefined ? null : guardrailNamesProblem(given.guardrails);
  if (guardrails) problems.push(`guardrails must be ${guardrails}`);
  const recorded = given.recordedTools === undefined ? null : recordedToolsProblem(given.recordedTools);
  if (recorded) problems.push(`recordedTools must be ${recorded}`);
  check(
    'modelPolicy',
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      ['boolean', 'undefined'].includes(typeof (value as ModelCallPolicy).localActivity),
    'an object whose localActivity, if given, is true or false',
  );
  return problems.length === 0 ? null : `Invalid conversation options: ${problems.join('; ')}`;
}

const COMPACTION_EXPECTED =
  'false or an object { model?, prompt?, keepRecentTurns?, maxContextBytes?, policy? }';

/** What is wrong with a `compaction` object, or `null`. */
function compactionOptionsProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return COMPACTION_EXPECTED;
  const given = value as Record<string, unknown>;
  const wrong = (field: string, valid: (field: unknown) => boolean): boolean =>
    given[field] !== undefined && !valid(given[field]);
  const isText = (field: unknown) => typeof field === 'string' && field.trim() !== '';
  const isCount = (field: unknown) => Number.isInteger(field) && (field as number) >= 1;
  if (wrong('model', isText)) return 'an object whose model is a model name';
  if (wrong('prompt', isText)) return 'an object whose prompt is a non-empty string';
  if (wrong('keepRecentTurns', isCount))
    return 'an object whose keepRecentTurns is a whole number of at least 1';
  if (wrong('maxContextBytes', isCount))
    return 'an object whose maxContextBytes is a whole number of at least 1';
  if (wrong('policy', (field) => typeof field === 'object' && field !== null && !Array.isArray(field))) {
    return 'an object whose policy is an object';
  }
  return null;
}

function compactionExpected(value: unknown): string {
  return value === false ? COMPACTION_EXPECTED : (compactionOptionsProblem(value) ?? COMPACTION_EXPECTED);
}

function shown(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : truncate(json, SHOWN_OPTION_CHARS);
}

/**
 * Why a message's `PromptOptions` cannot be accepted, or `null`. Whether the worker serves the model
 * is known only on the worker: a name it does not serve fails that turn, saying which names it serves.
 */
export function promptOptionsProblem(options: unknown): string | null {
  if (options === undefined || options === null) return null;
  if (typeof options !== 'object' || Array.isArray(options)) {
    return 'Prompt options must be an object such as { delivery: "followUp", key: "m-1", model: "fast" }';
  }
  const { model, delivery, key, ...rest } = options as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return `Prompt options: ${unknown.map((name) => `"${name}"`).join(', ')} is no option (delivery, key, model)`;
  if (model !== undefined && (typeof model !== 'string' || model.trim() === '')) {
    return `Prompt options: model must be a model name, got ${shown(model)}`;
  }
  return deliveryOptionsProblem({ delivery, key });
}

/** Why a user message cannot be accepted, or `null` when it can. */
export function userTextProblem(text: unknown, maxBytes: number): string | null {
  const refused = refusedPayloadReason(text);
  if (refused) return refused;
  if (typeof text !== 'string') return 'A message must be a string';
  if (text.trim() === '') return 'A message must not be empty';
  const bytes = utf8Bytes(text);
  if (bytes > maxBytes) return `A message may have at most ${maxBytes} bytes; this one has ${bytes}`;
  return null;
}

/** The deliveries a message may have (`MessageDelivery`), the default first. */
export const MESSAGE_DELIVERIES: readonly MessageDelivery[] = ['steer', 'followUp', 'interrupt'];

/** Why a message's `DeliveryOptions` (the second argument of `prompt` and `post`) are refused, or null. */
export function deliveryOptionsProblem(options: unknown): string | null {
  if (options === undefined || options === null) return null;
  if (typeof options !== 'object') return 'The delivery options must be an object ({ delivery, key })';
  const { delivery, key } = options as Record<string, unknown>;
  if (delivery !== undefined && !MESSAGE_DELIVERIES.includes(delivery as MessageDelivery))
    return `delivery must be one of ${MESSAGE_DELIVERIES.join(', ')}; got ${JSON.stringify(delivery)}`;
  if (key !== undefined && (typeof key !== 'string' || key === '' || key.length > MAX_MESSAGE_KEY_CHARS))
    return `key must be a non-empty string of at most ${MAX_MESSAGE_KEY_CHARS} characters`;
  return null;
}
