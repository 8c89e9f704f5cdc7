import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import type { AgentActivities, PrepareToolCallsInput } from '../src/contract/protocol.ts';
import { storedOutline } from '../src/contract/transcript.ts';
import type { AgentEventSink, AgentHooks, CompactionFunction } from '../src/contract/types.ts';
import {
  type ModelTable,
  modelNamed,
  modelTableOf,
  routedModel,
  routingInfo,
  type WorkerModel,
} from '../src/worker/model/models.ts';
import type { ResolvedModelSettings } from '../src/worker/model/settings.ts';
import type { ToolRegistry } from '../src/worker/registry.ts';
import { refuseCrossedQueue, type TaskQueueNeighbours } from '../src/worker/taskQueueNeighbours.ts';
import { ArgumentValidator } from '../src/worker/validation.ts';
import { checkCallbackOutput } from './callbackOutput.ts';
import { compactContext } from './compaction.ts';
import { endToolActivity, executeTool, safeSink } from './execute.ts';
import { callModel, createOpenAIClient } from './model.ts';
import { ModelContextReader } from './modelContext.ts';
import { prepareToolCalls } from './prepare.ts';
import { annotateActivitySpan } from './spanAttributes.ts';
import { StoredMessages } from './storedMessages.ts';

export interface AgentActivityDependencies {
  registry: ToolRegistry;
  /** One model's settings (`resolveModelSettings`), or else `models`. */
  model?: ResolvedModelSettings;
  /** The worker's models (`resolveModelTable`): several, with fallbacks, a route and rate limits. */
  models?: ModelTable;
  hooks?: AgentHooks;
  eventSink?: AgentEventSink;
  /**
   * A client on the worker's cluster: model calls read their context through a query. Default: the
   * worker's own client (`Context.current().client`), which shares the worker's connection.
   */
  getClient?: () => Promise<Client>;
  /** Cap on a tool result's text and details, in UTF-8 bytes. Default 4 MB. */
  maxToolResultBytes?: number;
  log?: (message: string) => void;
  /** Writes compaction summaries instead of the model (`AgentWorkerOptions.compact`). */
  compact?: CompactionFunction;
  /** The other workers of this worker's task queue: a model call is refused when one calls another model. */
  neighbours?: TaskQueueNeighbours;
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
  const storedMessages = new StoredMessages(deps.getClient ?? workerClient);
  const contexts = new ModelContextReader(deps.getClient ?? workerClient, storedMessages);
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
  const prepare = (input: PrepareToolCallsInput) =>
    prepareToolCalls({ registry: deps.registry, validator, hooks }, input);
  return {
    callModel: async (input) => {
      await refuseCrossedQueue(deps, input.tools);
      annotateActivitySpan({
        'yiem.conversation_id': input.conversationId,
        'yiem.turn': input.turn,
        'yiem.model': input.model ?? models.defaultModel,
      });
      const output = await callModel(
        { models, clientFor, registry: deps.registry, contexts, warn, prepare },
        input,
      );
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
    },
    compactContext: async (input) => {
      annotateActivitySpan({
        'yiem.conversation_id': input.conversationId,
        'yiem.turn': input.turn,
        'yiem.model': input.model ?? models.defaultModel,
      });
      const model = modelNamed(models, input.model, 'The compaction');
      return compactContext(
        { settings: model.settings, contexts, storedMessages, compact: deps.compact },
        clientFor(model),
        { ...input, model: model.settings.model },
      );
    },
    executeTool: async (input) => {
      annotateActivitySpan({
        'yiem.conversation_id': input.conversationId,
        'yiem.turn': input.turn,
        'yiem.tool.name': input.toolName,
        'yiem.tool.call_id': input.toolCallId,
      });
      const output = await executeTool(
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
      // A terminating result's text becomes the turn's reply, which the workflow reads from the message.
      if (output.terminate) return endToolActivity(output);
      const { stored } = await storedMessages.keep(output.message);
      return endToolActivity(stored ? { ...output, message: storedOutline(output.message, stored) } : output);
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
