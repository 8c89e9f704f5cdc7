import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import { DEFAULT_COMPACTION_PROMPT } from '../src/contract/compaction.ts';
import { readByModel } from '../src/contract/guardrails.ts';
import { COMPACTED_MESSAGE_CHARS } from '../src/contract/limits.ts';
import type { CompactContextInput, CompactContextOutput } from '../src/contract/protocol.ts';
import { resultText } from '../src/contract/toolResult.ts';
import { truncate } from '../src/contract/truncate.ts';
import type { CompactionFunction, Message } from '../src/contract/types.ts';
import { utf8Bytes } from '../src/contract/utf8.ts';
import { classifyModelError } from '../src/worker/model/errors.ts';
import {
  type ModelTable,
  modelNamed,
  type WorkerModel,
  wholeAttempt,
  withFallbacks,
} from '../src/worker/model/models.ts';
import {
  contextWindowBytes,
  modelEndpoint,
  type ResolvedModelSettings,
} from '../src/worker/model/settings.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import type { ModelContextReader } from './modelContext.ts';
import type { StoredMessages } from './storedMessages.ts';

export interface CompactionDependencies {
  models: ModelTable;
  /** The OpenAI client of a model, one per model and worker. */
  clientFor: (model: WorkerModel) => OpenAI;
  contexts: ModelContextReader;
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
 * cannot. A large summary goes to the payload store.
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
      const written = await withFallbacks(deps.models, named, (candidate) =>
        wholeAttempt(() =>
          summariseByModel(
            candidate.settings,
            deps.clientFor(candidate),
            { prompt, signal: context.cancellationSignal },
            toSummarise,
            earlier,
          ),
        ),
      );
      wrote = written.model.name;
      return written.reply;
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
    return kept.stored ? { summary: '', stored: kept.stored, model: written } : { summary, model: written };
  } finally {
    stopHeartbeats();
  }
}

interface SummaryCall {
  prompt: string;
  signal: AbortSignal;
}

/** Folds `messages` into `earlier` with the model, in as many calls as half its window needs. */
async function summariseByModel(
  settings: ResolvedModelSettings,
  openai: OpenAI,
  call: SummaryCall,
  messages: Message[],
  earlier: string | undefined,
): Promise<string> {
  const budget = Math.max(1, Math.floor(contextWindowBytes(settings, settings.model) / 2));
  let summary = earlier;
  let chunk: string[] = [];
  let bytes = 0;
  for (const line of messages.map(messageLine)) {
    const lineBytes = utf8Bytes(line);
    if (chunk.length > 0 && bytes + lineBytes > budget) {
      summary = await summaryCall(settings, openai, call, chunk, summary);
      chunk = [];
      bytes = 0;
    }
    chunk.push(line);
    bytes += lineBytes;
  }
  if (chunk.length > 0 || summary === undefined)
    summary = await summaryCall(settings, openai, call, chunk, summary);
  return summary;
}

async function summaryCall(
  settings: ResolvedModelSettings,
  openai: OpenAI,
  call: SummaryCall,
  lines: string[],
  earlier: string | undefined,
): Promise<string> {
  const parts = [
    earlier === undefined ? '' : `The summary of the conversation so far:\n${earlier}`,
    `The messages to fold into it:\n${lines.join('\n')}`,
  ];
  try {
    const completion = await openai.chat.completions.create(
      {
        model: settings.model,
        messages: [
          { role: 'system', content: call.prompt },
          { role: 'user', content: parts.filter((part) => part !== '').join('\n\n') },
        ],
      },
      { signal: call.signal },
    );
    const content = completion.choices[0]?.message?.content;
    return typeof content === 'string' ? content.trim() : '';
  } catch (error) {
    throw classifyModelError(error, { endpoint: modelEndpoint(settings), model: settings.model });
  }
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
