/**
 * The small rules of guardrails, for the workflow and the worker: which apply, what a guardrail
 * reads of a message, what the transcript keeps of a verdict, and what a model reads again.
 */
import { resultText, textContent } from './toolResult.ts';
import type { TranscriptEntry } from './transcript.ts';
import type { AgentDefinition } from './types/agents.ts';
import type { GuardrailNames, GuardrailStage, GuardrailTrip } from './types/guardrails.ts';
import type { GuardrailMark, Message } from './types/messages.ts';

/** The guardrails of `stage` that apply: the active agent's (after a handoff to one that names some), else the conversation's. */
export function guardrailsOf(
  conversation: GuardrailNames | undefined,
  agent: Pick<AgentDefinition, 'guardrails'> | undefined,
  stage: GuardrailStage,
): string[] {
  return (agent?.guardrails ?? conversation)?.[stage] ?? [];
}

/** The text a guardrail checks: the message's, or a tool result's text blocks joined. */
export function guardrailText(message: Message): string {
  return message.role === 'toolResult' ? resultText(message.content) : message.content;
}

const STAGE_SUBJECTS: Record<GuardrailStage, string> = {
  input: "the user's message",
  output: "the model's reply",
  toolResult: 'a tool result',
};

/** What a guardrail of `stage` checks, in words: `the user's message`. */
export function guardrailSubject(stage: GuardrailStage): string {
  return STAGE_SUBJECTS[stage];
}

/** The turn's error for a trip, in words a user can act on. */
export function guardrailTripMessage(trip: GuardrailTrip): string {
  return `The ${trip.stage} guardrail "${trip.guardrail}" tripped on ${STAGE_SUBJECTS[trip.stage]}: ${trip.reason}`;
}

/** The error of a guardrail whose `execute` threw: the activity's failure, then the turn's error. */
export function guardrailFailedMessage(stage: GuardrailStage, guardrail: string, cause: string): string {
  return `The ${stage} guardrail "${guardrail}" failed: ${cause}`;
}

/**
 * Whether a model call (or a compaction's summary) reads this entry: not a user message or reply
 * that a guardrail tripped on or could not check. A tool result always is: its content then says it
 * was withheld, so the call that asked for it still has its result.
 */
export function readByModel(entry: Pick<TranscriptEntry, 'role' | 'guardrail'>): boolean {
  if (entry.role === 'toolResult') return true;
  return !entry.guardrail?.tripped && entry.guardrail?.failed === undefined;
}

/**
 * The entry with the text the guardrails wrote (`rewrittenBy`, in order). A user message keeps its
 * `original` (an inline one: the turn checks messages as they arrive, before any is stored).
 */
export function rewrittenEntry(entry: TranscriptEntry, text: string, rewrittenBy: string[]): TranscriptEntry {
  const { stored, ...message } = entry;
  if (message.role === 'toolResult') {
    return { ...message, content: [textContent(text)], guardrail: { rewrittenBy } };
  }
  const original = message.role === 'user' && !stored ? { original: message.content } : {};
  return { ...message, content: text, guardrail: { rewrittenBy, ...original } };
}

/**
 * The entry marked as tripped on, or as not checked (`failed`). A tool result's text is replaced
 * by a note the model reads instead; a user message or reply stays as it was, never read again.
 */
export function withheldEntry(entry: TranscriptEntry, mark: GuardrailMark): TranscriptEntry {
  if (entry.role !== 'toolResult') return { ...entry, guardrail: mark };
  // The note replaces the content, so a stored original is no longer the entry's.
  const { stored: _withheld, ...result } = entry;
  const why = mark.tripped
    ? `guardrail "${mark.tripped.guardrail}" tripped: ${mark.tripped.reason}`
    : `the guardrails could not check it: ${mark.failed}`;
  return {
    ...result,
    content: [textContent(`The result of ${entry.toolName} was withheld: ${why}`)],
    details: {},
    isError: true,
    guardrail: mark,
  };
}

/** What is wrong with `ConversationOptions.guardrails` (or an agent's), or `null`. */
export function guardrailNamesProblem(value: unknown): string | null {
  const expected = 'an object { input?, output?, toolResult? } of lists of guardrail names';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return expected;
  for (const [stage, names] of Object.entries(value)) {
    if (stage !== 'input' && stage !== 'output' && stage !== 'toolResult') {
      return `${expected}, not "${stage}"`;
    }
    const isName = (name: unknown) => typeof name === 'string' && name.trim() !== '';
    if (!Array.isArray(names) || !names.every(isName)) return `${expected}; ${stage} is not a list of names`;
  }
  return null;
}

/** A stored entry's whole message, with the mark its outline got after it was stored. */
export function withEntryMark(entry: TranscriptEntry, message: Message): Message {
  return entry.guardrail ? { ...message, guardrail: entry.guardrail } : message;
}
