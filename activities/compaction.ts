import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { DEFAULT_COMPACTION_PROMPT } from '../src/contract/compaction.ts';
import { readByModel } from '../src/contract/guardrails.ts';
import { COMPACTED_MESSAGE_CHARS } from '../src/contract/limits.ts';
import type { CompactContextInput, CompactContextOutput } from '../src/contract/protocol.ts';
import { resultText } from '../src/contract/toolResult.ts';
import { truncate } from '../src/contract/truncate.ts';
import type { CompactionFunction } from '../src/contract/types/compaction.ts';
import type { Message } from '../src/contract/types/messages.ts';
import { utf8Bytes } from '../src/contract/utf8.ts';
import { activityEventPublisher } from './events.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import type { ModelContextReader } from './modelContext.ts';
import { modelNamed, type WorkerModel } from './models/models.ts';
import { contextWindowBytes } from './models/settings.ts';
import type { StoredMessages } from './storedMessages.ts';
import { type WholeModelCallDependencies, WholeModelCalls } from './wholeModelCall.ts';

export interface CompactionDependencies extends WholeModelCallDependencies {
  contexts: ModelContextReader;
  warn: (message: string) => void;
  storedMessages: StoredMessages;
  /** The worker's own compaction function, used instead of the model when set. */
  compact: CompactionFunction | undefined;
}

/**
 * A compaction's summary (the `compactContext` activity): reads the messages to summarise by
 * reference, as a model call does, and folds them into the previous summary, by the worker's
 * `compact` function or by model calls with the compaction prompt (several, one after another, when
 * the messages do not fit in half the model's window). The model is one of the worker's models, by
 * name (`input.model`, default the worker's default), and its fallbacks write the summary when it
 * cannot, each switch a `modelFallback` event; its requests count in the model's token window
 * (`WholeModelCalls`). A large summary goes to the payload store.
 */
export async function compactContext(
  deps: CompactionDependencies,
  input: CompactContextInput,
): Promise<CompactContextOutput> {
  const context = Context.current();
  const execution = context.info.workflowExecution;
  if (!execution) {
    throw ApplicationFailure.nonRetryable('compactContext runs only inside a conversation workflow');
  }
  const stopHeartbeats = heartbeatWhileRunning(context);
  const events = activityEventPublisher(input.turn, deps.warn, input);
  const calls = new WholeModelCalls(deps, context, events);
  try {
    const transcript = {
      workflowId: execution.workflowId,
      runId: execution.runId,
      transcriptId: input.transcriptId,
      messageCount: input.upTo,
    };
    // What a guardrail kept from the model is kept out of its summary too.
    const messages = (await deps.contexts.messagesBetween(transcript, input.from)).filter(readByModel);
    const previous = input.previous ? await deps.contexts.summaryText(input.previous) : undefined;
    const named = modelNamed(deps.models, input.model, 'The compaction');
    const model = named.name;
    const prompt = input.prompt ?? DEFAULT_COMPACTION_PROMPT;
    // The model that wrote the last summary: a fallback's name when the one named could not.
    let wrote = model;
    const summarise = async (toSummarise: Message[], earlier: string | undefined) => {
      const written = await summariseByModel(calls, named, prompt, toSummarise, earlier);
      wrote = written.model.name;
      return written.summary;
    };
    const summary = deps.compact
      ? await deps.compact(messages, {
          conversationId: input.conversationId,
          previousSummary: previous,
          prompt,
          model,
          signal: context.cancellationSignal,
          summarise,
        })
      : await summarise(messages, previous);
    if (typeof summary !== 'string' || summary.trim() === '') {
      throw ApplicationFailure.retryable(
        `The compaction ${deps.compact ? 'function' : `model ${model}`} returned no summary`,
        'EmptySummary',
      );
    }
    deps.contexts.rememberSummary(transcript, input.id, summary);
    const kept = await deps.storedMessages.keep({ role: 'user', content: summary, timestamp: Date.now() });
    const written = deps.compact ? 'custom' : wrote;
    const heldBack = await events.finish();
    return {
      ...(kept.stored ? { summary: '', stored: kept.stored } : { summary }),
      model: written,
      ...(heldBack.length > 0 ? { events: heldBack } : {}),
    };
  } catch (error) {
    await events.abandon();
    throw error;
  } finally {
    stopHeartbeats();
  }
}

/** Folds `messages` into `earlier` with the model, in as many calls as half its window needs. */
async function summariseByModel(
  calls: WholeModelCalls,
  named: WorkerModel,
  prompt: string,
  messages: Message[],
  earlier: string | undefined,
): Promise<{ summary: string; model: WorkerModel }> {
  let model = named;
  let summary = earlier;
  // Each call starts from the model named; `model` is the one that wrote the latest summary.
  const fold = async (lines: string[]) => {
    const parts = [
      summary === undefined ? '' : `The summary of the conversation so far:\n${summary}`,
      `The messages to fold into it:\n${lines.join('\n')}`,
    ];
    const written = await calls.complete(named, prompt, parts.filter((part) => part !== '').join('\n\n'));
    model = written.model;
    summary = written.text.trim();
  };
  const budget = Math.max(1, Math.floor(contextWindowBytes(named.settings, named.settings.model) / 2));
  let chunk: string[] = [];
  let bytes = 0;
  for (const line of messages.map(messageLine)) {
    const lineBytes = utf8Bytes(line);
    if (chunk.length > 0 && bytes + lineBytes > budget) {
      await fold(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(line);
    bytes += lineBytes;
  }
  if (chunk.length > 0 || summary === undefined) await fold(chunk);
  return { summary: summary as string, model };
}

/** One message as the compaction model reads it: who said it, and its text (cut when long). */
function messageLine(message: Message): string {
  switch (message.role) {
    case 'user':
      return `user: ${truncate(message.content, COMPACTED_MESSAGE_CHARS)}`;
    case 'assistant': {
      const calls = message.toolCalls.map(
        (toolCall) => `${toolCall.name}(${JSON.stringify(toolCall.arguments)})`,
      );
      const text = [message.content, ...(calls.length > 0 ? [`[calls ${calls.join(', ')}]`] : [])]
        .filter((part) => part !== '')
        .join(' ');
      return `assistant: ${truncate(text, COMPACTED_MESSAGE_CHARS)}`;
    }
    case 'toolResult':
      return `tool ${message.toolName}${message.isError ? ' (error)' : ''}: ${truncate(resultText(message.content), COMPACTED_MESSAGE_CHARS)}`;
  }
}
