import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { DEFAULT_MAX_TOOL_RESULT_BYTES } from '../src/contract/limits.ts';
import type { AgentActivities, PrepareToolCallsInput } from '../src/contract/protocol.ts';
import { storedOutline } from '../src/contract/transcript.ts';
import type {
  AgentEventSink,
  AgentHooks,
  CompactionFunction,
  WorkerGuardrails,
} from '../src/contract/types.ts';
import { withCost } from '../src/worker/model/prices.ts';
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
import { annotateActivitySpan } from './spanAttributes.ts';
import { StoredMessages } from './storedMessages.ts';

export interface AgentActivityDependencies {
  registry: ToolRegistry;
  model: ResolvedModelSettings;
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
  log?: (message: string) => void;
  /** Writes compaction summaries instead of the model (`AgentWorkerOptions.compact`). */
  compact?: CompactionFunction;
  /** The other workers of this worker's task queue: a model call is refused when one calls another model. */
  neighbours?: TaskQueueNeighbours;
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
  const storedMessages = new StoredMessages(getClient);
  const contexts = new ModelContextReader(getClient, storedMessages);
  const openai = createOpenAIClient(deps.model);
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
      annotateActivitySpan({
        'yiem.conversation_id': input.conversationId,
        'yiem.turn': input.turn,
        'yiem.model': input.model ?? deps.model.model,
      });
      const called = await callModel(
        { settings: deps.model, registry: deps.registry, contexts, warn, prepare },
        openai,
        input,
      );
      const requested = input.model ?? deps.model.model;
      const priced = withCost(called.usage, deps.model.prices ?? {}, [requested, called.model]);
      const output = priced === called.usage ? called : { ...called, usage: priced };
      const { role, content, toolCalls, model, usage, stopReason, timestamp } = output;
      const reply = { role, content, toolCalls, model, usage, stopReason, timestamp };
      const { stored } = await storedMessages.keep(reply);
      return stored ? { ...output, stored } : output;
    },
    compactContext: async (input) => {
      annotateActivitySpan({
        'yiem.conversation_id': input.conversationId,
        'yiem.turn': input.turn,
        'yiem.model': input.model ?? deps.model.model,
      });
      return compactContext(
        { settings: deps.model, contexts, storedMessages, compact: deps.compact },
        openai,
        input,
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
    runGuardrails: async (input) => {
      annotateActivitySpan({ 'yiem.conversation_id': input.conversationId, 'yiem.turn': input.turn });
      return runGuardrails(
        { guardrails: deps.guardrails ?? {}, settings: deps.model, storedMessages },
        openai,
        input,
      );
    },
    defaultModel: async () => deps.model.model,
    listTools: async () => deps.registry.list(),
    checkCallbackOutput: async (input) => checkCallbackOutput(validator, input),
  };
}

async function workerClient(): Promise<Client> {
  return Context.current().client;
}
