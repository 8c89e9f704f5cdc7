import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { workerDeathsText } from '../src/contract/messages.ts';
import type {
  ActivityEvents,
  CallModelInput,
  CallModelOutput,
  PreparedToolCall,
  PrepareToolCallsInput,
} from '../src/contract/protocol.ts';
import { withoutDefaultPolicy } from '../src/contract/toolPolicy.ts';
import { cancelledByWorkflow, lastAttempt } from './attempts.ts';
import { type ActivityEventPublisher, activityEventPublisher } from './events.ts';
import { heartbeatWhileRunning } from './heartbeat.ts';
import type { ModelContextReader } from './modelContext.ts';
import { completionChunks } from './models/completionStream.ts';
import { classifyModelError } from './models/errors.ts';
import { formatMessages, formatTools } from './models/formatMessages.ts';
import {
  type ModelAttempt,
  type ModelTable,
  modelNamed,
  type WorkerModel,
  withFallbacks,
} from './models/models.ts';
import { parseAssistantMessage } from './models/parseReply.ts';
import { withCost } from './models/prices.ts';
import { contextWindowBytes, modelEndpoint, type ResolvedModelSettings } from './models/settings.ts';
import type { ToolRegistry } from './registry/registry.ts';
import { StreamedCompletion } from './streamedContent.ts';
import { EventLoopShare, TextDeltaBatcher } from './textDeltas.ts';
import { reserveTokens } from './tokenLimit.ts';
import { publishFallback } from './wholeModelCall.ts';
import { keepWorkerDeaths, markedDetails, sealedByWorkerDeaths, workerDeathsBefore } from './workerDeaths.ts';

export interface ModelDependencies {
  models: ModelTable;
  /** The OpenAI client of a model, one per model and worker. */
  clientFor: (model: WorkerModel) => OpenAI;
  registry: ToolRegistry;
  contexts: ModelContextReader;
  warn: (message: string) => void;
  /** PREPARE of the reply's tool calls. */
  prepare: (input: PrepareToolCallsInput) => Promise<PreparedToolCall[]>;
  /** A client on the worker's cluster, for the limiter of a model with `rateLimit.tokensPerMinute`. */
  getClient: () => Promise<Client>;
  /** A call whose worker died this many times fails for good (0: never). */
  maxWorkerDeaths: number;
}

/** Creates the OpenAI client once per worker and model; Temporal's retry policy is the only retry. */
export function createOpenAIClient(settings: ResolvedModelSettings): OpenAI {
  return new OpenAI({
    apiKey: settings.apiKey,
    timeout: settings.timeoutMs,
    maxRetries: 0,
    ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
  });
}

/**
 * One model call (the seed's `prepareContext` + `formatMsgForLLM` + `llmCall`): read the context by
 * reference, format it with every registered tool, stream the reply (publishing its text as batched
 * `textDelta` events), and parse it; then PREPARE the reply's tool calls (`deps.prepare`,
 * prepare.ts), so the workflow receives them ready to run or already answered.
 */
export async function callModel(deps: ModelDependencies, input: CallModelInput): Promise<CallModelOutput> {
  const context = Context.current();
  const deaths = await workerDeathsBefore(context, deps.warn);
  if (sealedByWorkerDeaths(deaths, deps.maxWorkerDeaths)) {
    throw ApplicationFailure.create({
      message: workerDeathsText('this model call', deaths),
      type: WORKER_DEATHS,
      nonRetryable: true,
    });
  }
  await keepWorkerDeaths(context, deaths, deps.warn);
  // Heartbeats let the server notice a dead worker within the heartbeat timeout, and carry
  // cancellation to the HTTP request through the activity's signal.
  const stopHeartbeats = heartbeatWhileRunning(context, () => markedDetails(context, deaths));
  try {
    const reply = await callWithFallbacks(deps, input, context);
    if (reply.toolCalls.length === 0) return reply;
    const { conversationId, turn, tools } = input;
    const toolCalls = reply.toolCalls;
    return {
      ...reply,
      prepared: (await deps.prepare({ conversationId, turn, toolCalls, ...(tools ? { tools } : {}) })).map(
        withoutDefaultPolicy,
      ),
    };
  } finally {
    stopHeartbeats();
  }
}

/** The failure type of a model call given up because its worker died too often. */
const WORKER_DEATHS = 'WorkerDeaths';

/**
 * The call to the model asked for and its fallbacks (`withFallbacks`): each switch is a
 * `modelFallback` event and is recorded on the reply. When the last model fails too, its error fails
 * the attempt and Temporal's retry starts again at the first.
 */
async function callWithFallbacks(
  deps: ModelDependencies,
  input: CallModelInput,
  context: Context,
): Promise<CallModelOutput> {
  const first = modelNamed(deps.models, input.model);
  const { local } = input;
  const events = activityEventPublisher(input.turn, deps.warn, input, local?.callKey);
  try {
    const { reply, fallbacks } = await withFallbacks(
      deps.models,
      first,
      (model) => streamModelCall(deps, model, input, context, events),
      publishFallback(events),
    );
    const heldBack = await events.finish();
    return {
      ...reply,
      ...(fallbacks.length > 0 ? { fallbacks } : {}),
      ...(heldBack.length > 0 ? { events: textAsPlaceholder(heldBack) } : {}),
    };
  } catch (error) {
    await events.abandon(local ? { retrying: retriedAfter(error, context, local.maximumAttempts) } : {});
    throw cancelledByWorkflow(context) ?? error;
  }
}

/** Whether Temporal runs another attempt of a local call after this one failed with `error`. */
function retriedAfter(error: unknown, context: Context, maximumAttempts: number): boolean {
  if (context.cancellationSignal.aborted) return false;
  if (error instanceof ApplicationFailure && error.nonRetryable) return false;
  return !lastAttempt(context.info.attempt, maximumAttempts);
}

async function streamModelCall(
  deps: ModelDependencies,
  target: WorkerModel,
  input: CallModelInput,
  context: Context,
  events: ActivityEventPublisher,
): Promise<ModelAttempt<CallModelOutput>> {
  const execution = context.info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('callModel runs only inside a conversation workflow');
  const { settings } = target;
  const model = settings.model;
  const contextWindow = contextWindowBytes(settings, model);
  const {
    systemPrompt: conversationPrompt,
    preamble,
    messages,
    stored,
  } = await deps.contexts.read({
    workflowId: execution.workflowId,
    runId: execution.runId,
    transcriptId: input.transcriptId,
    messageCount: input.messageCount,
    tail: input.tail,
    local: context.info.isLocal,
    storeIndices: input.storeIndices ?? [],
    maxContextBytes: contextWindow,
    compaction: input.compaction,
  });
  const systemPrompt = [input.agent?.systemPrompt ?? conversationPrompt, preamble]
    .filter((part) => part !== '')
    .join('\n\n');
  await deps.registry.refresh();
  const offered = input.tools;
  const tools = deps.registry.tools().filter((tool) => !offered || offered.includes(tool.name));
  // Announced with the first output: an attempt that fails before producing any costs no event, and
  // a call that hangs sends no signal (each one wakes the workflow, and a workflow task stuck on a
  // dead worker's sticky queue delays the context query of the retried call).
  let announced = false;
  const announce = (): void => {
    if (!announced) events.publish({ type: 'messageStart', model: target.name }, { now: true });
    announced = true;
  };
  const text = new TextDeltaBatcher(
    (delta, streaming) => {
      announce();
      events.publish({ type: 'textDelta', text: delta }, { live: streaming, inReply: true });
    },
    () => events.onLiveChannel,
  );
  const request = {
    model,
    messages: formatMessages(systemPrompt, messages),
    ...(tools.length > 0 ? { tools: formatTools(tools) } : {}),
    stream_options: { include_usage: true },
  };
  const reservation = await reserveTokens(await deps.getClient(), context, target, request);
  try {
    const signal = context.cancellationSignal;
    const response = await deps
      .clientFor(target)
      .chat.completions.create({ ...request, stream: true }, { signal })
      .asResponse();
    const reply = new StreamedCompletion();
    const share = new EventLoopShare();
    for await (const chunks of completionChunks(response, signal)) {
      for (const chunk of chunks) text.add(reply.add(chunk));
      await share.now();
    }
    const parsed = parseAssistantMessage(reply.completion(), model);
    // A worker of several models names the one that answered as conversations name it.
    const message = deps.models.anyName ? parsed : { ...parsed, model: target.name };
    text.flush();
    announce();
    events.publish({
      type: 'messageEnd',
      toolCalls: message.toolCalls.map((call) => ({ id: call.id, name: call.name })),
    });
    const usage = withCost(message.usage, settings.prices ?? {}, [target.name, model, parsed.model]);
    // An endpoint that reports no usage leaves the estimate in the window.
    if (usage) await reservation?.settle(usage.totalTokens);
    return {
      reply: {
        ...message,
        usage,
        ...(stored.length > 0 ? { storedMessages: stored } : {}),
        contextWindow,
      },
    };
  } catch (error) {
    text.flush();
    const failure = classifyModelError(error, { endpoint: modelEndpoint(settings), model });
    return { failure, answered: announced };
  } finally {
    text.stop();
  }
}

/**
 * The attempt's text deltas, held back for the result, become one `messageText` placeholder: the
 * message in the same result already holds that text, and history should keep it once.
 */
function textAsPlaceholder(events: ActivityEvents): ActivityEvents {
  const firstDelta = events.findIndex((event) => event.type === 'textDelta');
  return events
    .filter((event, index) => event.type !== 'textDelta' || index === firstDelta)
    .map((event, seq) =>
      event.type === 'textDelta'
        ? { type: 'messageText', turn: event.turn, attempt: event.attempt, seq }
        : { ...event, seq },
    );
}
