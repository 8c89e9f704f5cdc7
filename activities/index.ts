import type { Tracer } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import type { AgentActivities, PrepareToolCallsInput } from '../src/contract/protocol.ts';
import { resultText } from '../src/contract/toolResult.ts';
import { limitToolResult } from '../src/contract/toolResultLimit.ts';
import type {
  AgentEventSink,
  AgentHooks,
  CompactionFunction,
  WorkerGuardrails,
} from '../src/contract/types.ts';
import { chatReplyAttributes, GEN_AI, genAiSpanName, YIEM } from '../src/infrastructure/genAiConventions.ts';
import {
  type ModelTable,
  modelTableOf,
  routedModel,
  routingInfo,
  type WorkerModel,
} from '../src/worker/model/models.ts';
import type { ResolvedModelSettings } from '../src/worker/model/settings.ts';
import { nexusEndpointMissing } from '../src/worker/nexusEndpoints.ts';
import type { ToolRegistry } from '../src/worker/registry.ts';
import { refuseCrossedQueue, type TaskQueueNeighbours } from '../src/worker/taskQueueNeighbours.ts';
import { ArgumentValidator } from '../src/worker/validation.ts';
import { checkCallbackOutput } from './callbackOutput.ts';
import { compactContext } from './compaction.ts';
import { endToolActivity, executeTool, safeSink } from './execute.ts';
import { runGuardrails } from './guardrails.ts';
import { callModel, createOpenAIClient } from './model.ts';
import { ModelContextReader } from './modelContext.ts';
import { prepareToolCalls } from './prepare.ts';
import { annotateActivitySpan, inGenAiSpan, markSpanFailed } from './spanAttributes.ts';
import { keepToolOutput, StoredMessages } from './storedMessages.ts';

export interface AgentActivityDependencies {
  registry: ToolRegistry;
  /** One model's settings (`resolveModelSettings`), or else `models`. */
  model?: ResolvedModelSettings;
  /** The worker's models (`resolveModelTable`): several, with fallbacks, a route and rate limits. */
  models?: ModelTable;
  hooks?: AgentHooks;
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
  log?: (message: string) => void;
  /** Writes compaction summaries instead of the model (`AgentWorkerOptions.compact`). */
  compact?: CompactionFunction;
  /** The other workers of this worker's task queue: a model call is refused when one calls another model. */
  neighbours?: TaskQueueNeighbours;
  /** Tracing's tracer (`startTracing`): each model call gets a `chat` span, each tool call an `execute_tool` one. */
  tracer?: Tracer;
  /** The guardrails conversations may name (`AgentWorkerOptions.guardrails`). */
  guardrails?: WorkerGuardrails;
}

/**
 * The activities a conversation workflow schedules, bound to one worker's tools and model. The seed's
 * pipeline: PREPARE (prepare.ts) runs inside `callModel` (model.ts), EXECUTE (execute.ts) and FINALIZE
 * (finalize.ts) inside `executeTool`.
 */
export function createAgentActivities(deps: AgentActivityDependencies): AgentActivities {
  const hooks = deps.hooks ?? {};
  const validator = new ArgumentValidator();
  const warn = deps.log ?? console.warn;
  const emit = safeSink(deps.eventSink, warn);
  const getClient = deps.getClient ?? workerClient;
  const storedMessages = new StoredMessages(
    getClient,
    deps.payloadStoreRetryMs === undefined ? {} : { storeRetryMs: deps.payloadStoreRetryMs },
  );
  const contexts = new ModelContextReader(getClient, storedMessages);
  const models = modelTableOf(deps);
  const clients = new Map<string, OpenAI>();
  // By endpoint, key and timeout: a worker of one model serves any name a conversation asks for with one client.
  const clientFor = (model: WorkerModel): OpenAI => {
    const { baseURL, apiKey, timeoutMs } = model.settings;
    const key = JSON.stringify([baseURL, apiKey, timeoutMs]);
    const known = clients.get(key);
    if (known) return known;
    const client = createOpenAIClient(model.settings);
    clients.set(key, client);
    return client;
  };
  const maxToolResultBytes = deps.maxToolResultBytes ?? DEFAULT_MAX_TOOL_RESULT_BYTES;
  // PREPARE is no activity of its own: the model call that asked for the tools runs it before it
  // returns, so a batch costs no extra activity and a refused call never leaves the worker.
  const endpointMissing = async (name: string) => nexusEndpointMissing(await getClient(), name);
  const prepare = (input: PrepareToolCallsInput) =>
    prepareToolCalls(
      { registry: deps.registry, validator, hooks, nexusEndpointMissing: endpointMissing },
      input,
    );
  return {
    callModel: async (input) => {
      await refuseCrossedQueue(deps, input.tools);
      const requested = input.model ?? models.defaultModel;
      annotateActivitySpan(input.conversationId, {
        [YIEM.turn]: input.turn,
        [YIEM.model]: requested,
      });
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
        const output = await callModel(
          { models, clientFor, registry: deps.registry, contexts, warn, prepare, getClient },
          input,
        );
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
    },
    compactContext: async (input) => {
      annotateActivitySpan(input.conversationId, {
        [YIEM.turn]: input.turn,
        [YIEM.model]: input.model ?? models.defaultModel,
      });
      return compactContext(
        { models, clientFor, getClient, contexts, storedMessages, warn, compact: deps.compact },
        input,
      );
    },
    executeTool: async (input) => {
      annotateActivitySpan(input.conversationId, {
        [YIEM.turn]: input.turn,
        [YIEM.toolName]: input.toolName,
        [YIEM.toolCallId]: input.toolCallId,
      });
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
          {
            registry: deps.registry,
            hooks,
            emit,
            warn,
            maxResultBytes: maxToolResultBytes,
            workerIdentity: deps.neighbours?.identity,
          },
          input,
        );
        if (executed.message.isError) markSpanFailed(opened, resultText(executed.message.content));
        return executed;
      });
      // A terminating result's text becomes the turn's reply, which the workflow reads from the message.
      if (output.terminate) return endToolActivity(output);
      return endToolActivity(await keepToolOutput(storedMessages, output));
    },
    keepToolResult: async ({ conversationId, turn, message }) => {
      annotateActivitySpan(conversationId, {
        [YIEM.turn]: turn,
        [YIEM.toolName]: message.toolName,
        [YIEM.toolCallId]: message.toolCallId,
      });
      const { content, details } = limitToolResult(
        { content: message.content, details: message.details, usage: null, terminate: false },
        maxToolResultBytes,
      );
      return storedMessages.keep({ ...message, content, details });
    },
    runGuardrails: async (input) => {
      annotateActivitySpan(input.conversationId, { [YIEM.turn]: input.turn });
      return runGuardrails(
        { guardrails: deps.guardrails ?? {}, models, clientFor, getClient, storedMessages, warn },
        input,
      );
    },
    defaultModel: async () => models.defaultModel,
    modelRouting: async () => routingInfo(models, Context.current().info.taskQueue),
    routeModel: (input) => routedModel(models, input),
    listTools: async () => deps.registry.list(),
    checkCallbackOutput: async (input) => checkCallbackOutput(validator, input),
  };
}

async function workerClient(): Promise<Client> {
  return Context.current().client;
}
