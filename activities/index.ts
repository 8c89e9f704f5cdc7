import type { Attributes, Tracer } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import type { EvalActivities } from '../src/contract/evals.ts';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import type {
  AgentActivities,
  CallModelInput,
  CallModelOutput,
  ExecuteToolInput,
  ExecuteToolOutput,
  PrepareToolCallsInput,
} from '../src/contract/protocol.ts';
import { resultText } from '../src/contract/toolResult.ts';
import { limitToolResult } from '../src/contract/toolResultLimit.ts';
import type { CompactionFunction } from '../src/contract/types/compaction.ts';
import type { AgentEventSink } from '../src/contract/types/events.ts';
import type { WorkerGuardrails } from '../src/contract/types/guardrails.ts';
import type { AgentHooks } from '../src/contract/types/hooks.ts';
import { chatReplyAttributes, GEN_AI, genAiSpanName, YIEM } from '../src/infrastructure/genAiConventions.ts';
import { checkCallbackOutput } from './callbackOutput.ts';
import { compactContext } from './compaction.ts';
import { runEvalCase } from './evalCase.ts';
import { endToolActivity, executeTool, safeSink } from './execute.ts';
import { runGuardrails } from './guardrails.ts';
import { callModel, createOpenAIClient } from './model.ts';
import { ModelContextReader } from './modelContext.ts';
import {
  type ModelTable,
  modelTableOf,
  routedModel,
  routingInfo,
  type WorkerModel,
} from './models/models.ts';
import type { ResolvedModelSettings } from './models/settings.ts';
import { nexusEndpointMissing } from './nexusEndpoints.ts';
import { prepareToolCalls } from './prepare.ts';
import type { ToolRegistry } from './registry/registry.ts';
import { ArgumentValidator } from './registry/validation.ts';
import { annotateActivitySpan, inGenAiSpan, markSpanFailed } from './spanAttributes.ts';
import { keepToolOutput, StoredMessages } from './storedMessages.ts';
import { refuseCrossedQueue, type TaskQueueNeighbours } from './taskQueueNeighbours.ts';
import { DEFAULT_MAX_WORKER_DEATHS } from './workerDeaths.ts';

/** What the activities of `createAgentActivities` run with: the worker's tools, models, hooks and stores. */
export interface AgentActivityDependencies {
  /** The tools the activities validate and run calls against. */
  registry: ToolRegistry;
  /** One model's settings (`resolveModelSettings`), or else `models`. */
  model?: ResolvedModelSettings;
  /** The worker's models (`resolveModelTable`): several, with fallbacks, a route and rate limits. */
  models?: ModelTable;
  /** `beforeToolCall` and `afterToolCall` around every tool call. Default: none. */
  hooks?: AgentHooks;
  /** Receives the tool events (see `AgentEvent`). Default: none. */
  eventSink?: AgentEventSink;
  /**
   * A client on the worker's cluster: model calls read their context through a query, and PREPARE
   * asks whether a Nexus tool's endpoint exists. Default: the worker's own client
   * (`Context.current().client`), which shares the worker's connection.
   */
  getClient?: () => Promise<Client>;
  /** Cap on a tool result's text and details, in UTF-8 bytes. Default 4 MB. */
  maxToolResultBytes?: number;
  /** How long a finished result's write to an unreachable payload store is retried. Default 2 minutes. */
  payloadStoreRetryMs?: number;
  /** A model or tool call whose worker died this many times fails for good (0: never). Default 5. */
  maxWorkerDeaths?: number;
  /** Where the activities' warnings go. Default `console.warn`. */
  log?: (message: string) => void;
  /** Writes compaction summaries instead of the model (`AgentWorkerOptions.compaction.compact`). */
  compact?: CompactionFunction;
  /** The other workers of this worker's task queue: a model call is refused when one calls another model. */
  neighbours?: TaskQueueNeighbours;
  /** Tracing's tracer (`startTracing`): each model call gets a `chat` span, each tool call an `execute_tool` one. */
  tracer?: Tracer;
  /** The guardrails conversations may name (`AgentWorkerOptions.hooks.guardrails`). */
  guardrails?: WorkerGuardrails;
}

/**
 * The activities a conversation workflow schedules, bound to one worker's tools and model. The seed's
 * pipeline: PREPARE (prepare.ts) runs inside `callModel` (model.ts), EXECUTE (execute.ts) and FINALIZE
 * (finalize.ts) inside `executeTool`. Each activity's span carries what `ACTIVITY_SPAN_LABELS` says.
 */
export function createAgentActivities(deps: AgentActivityDependencies): AgentActivities & EvalActivities {
  const worker = workerParts(deps);
  const { models, validator } = worker;
  return {
    callModel: labelled('callModel', worker, (input) => modelCall(worker, input)),
    compactContext: labelled('compactContext', worker, (input) =>
      compactContext({ ...worker, compact: deps.compact }, input),
    ),
    executeTool: labelled('executeTool', worker, (input) => toolCall(worker, input)),
    keepToolResult: labelled('keepToolResult', worker, ({ message }) => {
      const { content, details } = limitToolResult(
        { content: message.content, details: message.details, usage: null, terminate: false },
        worker.maxResultBytes,
      );
      return worker.storedMessages.keep({ ...message, content, details });
    }),
    runGuardrails: labelled('runGuardrails', worker, (input) =>
      runGuardrails({ ...worker, guardrails: deps.guardrails ?? {} }, input),
    ),
    defaultModel: async () => models.defaultModel,
    modelRouting: async () => routingInfo(models, Context.current().info.taskQueue),
    routeModel: (input) => routedModel(models, input),
    listTools: async () => deps.registry.list(),
    checkCallbackOutput: async (input) => checkCallbackOutput(validator, input),
    runEvalCase: (input) => runEvalCase(worker.getClient, input),
  };
}

/** What one worker's activities share: its models and their clients, its stores, its tools and hooks. */
interface WorkerParts {
  deps: AgentActivityDependencies;
  models: ModelTable;
  clientFor: (model: WorkerModel) => OpenAI;
  getClient: () => Promise<Client>;
  storedMessages: StoredMessages;
  contexts: ModelContextReader;
  validator: ArgumentValidator;
  hooks: AgentHooks;
  emit: AgentEventSink;
  warn: (message: string) => void;
  maxResultBytes: number;
  maxWorkerDeaths: number;
  prepare: (input: PrepareToolCallsInput) => ReturnType<typeof prepareToolCalls>;
}

function workerParts(deps: AgentActivityDependencies): WorkerParts {
  const hooks = deps.hooks ?? {};
  const validator = new ArgumentValidator();
  const warn = deps.log ?? console.warn;
  const getClient = deps.getClient ?? workerClient;
  const storedMessages = new StoredMessages(
    getClient,
    deps.payloadStoreRetryMs === undefined ? {} : { storeRetryMs: deps.payloadStoreRetryMs },
  );
  // PREPARE is no activity of its own: the model call that asked for the tools runs it before it
  // returns, so a batch costs no extra activity and a refused call never leaves the worker.
  const endpointMissing = async (name: string) => nexusEndpointMissing(await getClient(), name);
  const prepare = (input: PrepareToolCallsInput) =>
    prepareToolCalls(
      { registry: deps.registry, validator, hooks, nexusEndpointMissing: endpointMissing },
      input,
    );
  return {
    deps,
    models: modelTableOf(deps),
    clientFor: openAIClients(),
    getClient,
    storedMessages,
    contexts: new ModelContextReader(getClient, storedMessages),
    validator,
    hooks,
    emit: safeSink(deps.eventSink, warn),
    warn,
    maxResultBytes: deps.maxToolResultBytes ?? DEFAULT_MAX_TOOL_RESULT_BYTES,
    maxWorkerDeaths: deps.maxWorkerDeaths ?? DEFAULT_MAX_WORKER_DEATHS,
    prepare,
  };
}

/** By endpoint, key and timeout: a worker of one model serves any name a conversation asks for with one client. */
function openAIClients(): (model: WorkerModel) => OpenAI {
  const clients = new Map<string, OpenAI>();
  return (model) => {
    const { baseURL, apiKey, timeoutMs } = model.settings;
    const key = JSON.stringify([baseURL, apiKey, timeoutMs]);
    const client = clients.get(key) ?? createOpenAIClient(model.settings);
    clients.set(key, client);
    return client;
  };
}

type LabelledActivity = 'callModel' | 'compactContext' | 'executeTool' | 'keepToolResult' | 'runGuardrails';
type InputOf<K extends LabelledActivity> = Parameters<AgentActivities[K]>[0];

/**
 * What the tracing interceptor's span of each activity (`RunActivity:callModel`, …) is labelled with,
 * besides its conversation and attempt: its turn and what the call is about.
 */
const ACTIVITY_SPAN_LABELS: {
  [K in LabelledActivity]: (input: InputOf<K>, models: ModelTable) => Attributes;
} = {
  callModel: (input, models) => ({
    [YIEM.turn]: input.turn,
    [YIEM.model]: input.model ?? models.defaultModel,
  }),
  compactContext: (input, models) => ({
    [YIEM.turn]: input.turn,
    [YIEM.model]: input.model ?? models.defaultModel,
  }),
  executeTool: (input) => ({
    [YIEM.turn]: input.turn,
    [YIEM.toolName]: input.toolName,
    [YIEM.toolCallId]: input.toolCallId,
  }),
  keepToolResult: ({ turn, message }) => ({
    [YIEM.turn]: turn,
    [YIEM.toolName]: message.toolName,
    [YIEM.toolCallId]: message.toolCallId,
  }),
  runGuardrails: (input) => ({ [YIEM.turn]: input.turn }),
};

/** The activity `name` with its span labelled by {@link ACTIVITY_SPAN_LABELS} before it runs. */
function labelled<K extends LabelledActivity, R>(
  name: K,
  worker: WorkerParts,
  run: (input: InputOf<K>) => Promise<R>,
): (input: InputOf<K>) => Promise<R> {
  return async (input) => {
    annotateActivitySpan(input.conversationId, ACTIVITY_SPAN_LABELS[name](input, worker.models));
    return run(input);
  };
}

/** `callModel` in its `chat <model>` span; a large reply is kept in the payload store. */
async function modelCall(worker: WorkerParts, input: CallModelInput): Promise<CallModelOutput> {
  const { deps, models, storedMessages } = worker;
  await refuseCrossedQueue(deps, input.tools);
  const requested = input.model ?? models.defaultModel;
  const chat = {
    tracer: deps.tracer,
    name: genAiSpanName('chat', requested),
    kind: 'client' as const,
    attributes: {
      [GEN_AI.operationName]: 'chat',
      // The endpoint speaks OpenAI's API, whoever serves it.
      [GEN_AI.providerName]: 'openai',
      [GEN_AI.requestModel]: requested,
      [GEN_AI.conversationId]: input.conversationId,
      [YIEM.turn]: input.turn,
    },
  };
  return inGenAiSpan(chat, async (span) => {
    const output = await callModel({ ...worker, registry: deps.registry }, input);
    span?.setAttributes(chatReplyAttributes(output));
    const { role, content, toolCalls, model, usage, stopReason, timestamp, fallbacks } = output;
    const reply = {
      role,
      content,
      toolCalls,
      model,
      usage,
      stopReason,
      timestamp,
      ...(fallbacks ? { fallbacks } : {}),
    };
    const { stored } = await storedMessages.keep(reply);
    return stored ? { ...output, stored } : output;
  });
}

/** `executeTool` in its `execute_tool <tool>` span; a large result is kept in the payload store. */
async function toolCall(worker: WorkerParts, input: ExecuteToolInput): Promise<ExecuteToolOutput> {
  const { deps, storedMessages } = worker;
  const span = {
    tracer: deps.tracer,
    name: genAiSpanName('execute_tool', input.toolName),
    attributes: {
      [GEN_AI.operationName]: 'execute_tool',
      [GEN_AI.toolName]: input.toolName,
      [GEN_AI.toolCallId]: input.toolCallId,
      [GEN_AI.conversationId]: input.conversationId,
      [YIEM.turn]: input.turn,
    },
  };
  const output = await inGenAiSpan(span, async (opened) => {
    const executed = await executeTool(
      { ...worker, registry: deps.registry, workerIdentity: deps.neighbours?.identity },
      input,
    );
    if (executed.message.isError) markSpanFailed(opened, resultText(executed.message.content));
    return executed;
  });
  // A terminating result's text becomes the turn's reply, which the workflow reads from the message.
  if (output.terminate) return endToolActivity(output);
  return endToolActivity(await keepToolOutput(storedMessages, output));
}

async function workerClient(): Promise<Client> {
  return Context.current().client;
}
