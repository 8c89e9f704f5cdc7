import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { guardrailFailedMessage, guardrailText } from '../src/contract/guardrails.ts';
import { SHOWN_OPTION_CHARS } from '../src/contract/limits.ts';
import type { GuardrailOutcome, RunGuardrailsInput, RunGuardrailsOutput } from '../src/contract/protocol.ts';
import { describeThrown } from '../src/contract/thrown.ts';
import { truncate } from '../src/contract/truncate.ts';
import type {
  Guardrail,
  GuardrailContext,
  GuardrailModelRequest,
  GuardrailVerdict,
  WorkerGuardrails,
} from '../src/contract/types/guardrails.ts';
import { activityEventPublisher } from './events.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import { modelNamed } from './models/models.ts';
import type { StoredMessages } from './storedMessages.ts';
import { type WholeModelCallDependencies, WholeModelCalls } from './wholeModelCall.ts';

export interface GuardrailDependencies extends WholeModelCallDependencies {
  guardrails: WorkerGuardrails;
  storedMessages: StoredMessages;
  warn: (message: string) => void;
}

/**
 * The `runGuardrails` activity. An unknown name or a verdict of the wrong shape fails it for good
 * (no retry mends a configuration); a guardrail that throws fails the attempt, retried as the
 * workflow's policy says (unless it threw a non-retryable failure), with an error naming the guardrail.
 * A guardrail's `complete()` is a model call like the turn's (`WholeModelCalls`): its fallbacks are
 * `modelFallback` events, its tokens count in the model's window.
 */
export async function runGuardrails(
  deps: GuardrailDependencies,
  input: RunGuardrailsInput,
): Promise<RunGuardrailsOutput | GuardrailOutcome[]> {
  const { stage } = input;
  const registered = deps.guardrails[stage] ?? [];
  const chosen = input.guardrails.map((name) => {
    const guardrail = registered.find((candidate) => candidate.name === name);
    if (guardrail) return guardrail;
    const known = registered.map((candidate) => `"${candidate.name}"`).join(', ') || 'none';
    throw ApplicationFailure.nonRetryable(
      `This worker has no ${stage} guardrail "${name}" (its ${stage} guardrails: ${known})`,
      'UnknownGuardrail',
    );
  });
  const context = Context.current();
  const stopHeartbeats = heartbeatWhileRunning(context);
  const events = activityEventPublisher(input.turn, deps.warn, input);
  const calls = new WholeModelCalls(deps, context, events);
  const complete = async (request: GuardrailModelRequest) => {
    const named = modelNamed(deps.models, request.model, `The ${stage} guardrail's complete()`);
    return (await calls.complete(named, request.instructions, request.input)).text;
  };
  try {
    const outcomes: GuardrailOutcome[] = [];
    for (const entry of input.messages) {
      const message = await deps.storedMessages.resolve(entry);
      const checkContext: GuardrailContext = {
        conversationId: input.conversationId,
        turn: input.turn,
        stage,
        message,
        signal: context.cancellationSignal,
        complete,
      };
      outcomes.push(await checkText(chosen, guardrailText(message), checkContext));
    }
    const heldBack = await events.finish();
    // Workflow code from before these events reads the outcomes alone.
    if (input.followed === undefined) return outcomes;
    return { outcomes, ...(heldBack.length > 0 ? { events: heldBack } : {}) };
  } catch (error) {
    await events.abandon();
    throw error;
  } finally {
    stopHeartbeats();
  }
}

/** One message through the chosen guardrails in order: each reads what the one before let through. */
async function checkText(
  chosen: Guardrail[],
  original: string,
  context: GuardrailContext,
): Promise<GuardrailOutcome> {
  let text = original;
  const rewrittenBy: string[] = [];
  for (const guardrail of chosen) {
    const verdict = await verdictOf(guardrail, text, context);
    if (verdict.action === 'trip') {
      return { action: 'trip', guardrail: guardrail.name, reason: verdict.reason };
    }
    if (verdict.action === 'rewrite') {
      text = verdict.text;
      rewrittenBy.push(guardrail.name);
    }
  }
  return rewrittenBy.length > 0 ? { action: 'rewrite', text, rewrittenBy } : { action: 'pass' };
}

async function verdictOf(
  guardrail: Guardrail,
  text: string,
  context: GuardrailContext,
): Promise<GuardrailVerdict> {
  let verdict: unknown;
  try {
    verdict = await guardrail.execute(text, context);
  } catch (error) {
    // A failure no retry mends (a model the worker does not serve, a rejected request) stays so.
    throw ApplicationFailure.create({
      message: guardrailFailedMessage(context.stage, guardrail.name, describeThrown(error)),
      type: 'GuardrailFailed',
      nonRetryable: error instanceof ApplicationFailure && error.nonRetryable === true,
    });
  }
  if (isVerdict(verdict)) return verdict;
  const shown = truncate(JSON.stringify(verdict) ?? String(verdict), SHOWN_OPTION_CHARS);
  throw ApplicationFailure.nonRetryable(
    guardrailFailedMessage(
      context.stage,
      guardrail.name,
      `it returned ${shown}, not { action: 'pass' }, { action: 'rewrite', text } or { action: 'trip', reason }`,
    ),
    'GuardrailFailed',
  );
}

function isVerdict(value: unknown): value is GuardrailVerdict {
  if (typeof value !== 'object' || value === null) return false;
  const verdict = value as Record<string, unknown>;
  switch (verdict.action) {
    case 'pass':
      return true;
    case 'rewrite':
      return typeof verdict.text === 'string';
    case 'trip':
      return typeof verdict.reason === 'string' && verdict.reason.trim() !== '';
    default:
      return false;
  }
}

/** Refuses a worker's guardrails that conversations could not name unambiguously, before it starts. */
export function checkGuardrailRegistration(guardrails: WorkerGuardrails): void {
  for (const [stage, list] of Object.entries(guardrails) as [string, Guardrail[] | undefined][]) {
    const seen = new Set<string>();
    for (const guardrail of list ?? []) {
      if (
        typeof guardrail?.name !== 'string' ||
        guardrail.name.trim() === '' ||
        typeof guardrail.execute !== 'function'
      ) {
        throw new Error(`Every ${stage} guardrail needs a name and an execute function`);
      }
      if (seen.has(guardrail.name)) throw new Error(`Two ${stage} guardrails are named "${guardrail.name}"`);
      seen.add(guardrail.name);
    }
  }
}
