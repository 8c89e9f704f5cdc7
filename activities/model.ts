import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { classifyModelError } from '../src/model/errors.ts';
import { formatMessages, formatTools } from '../src/model/formatMessages.ts';
import { parseAssistantMessage } from '../src/model/parseReply.ts';
import type { ResolvedModelSettings } from '../src/model/settings.ts';
import type { CallModelInput } from '../src/protocol.ts';
import type { ToolRegistry } from '../src/registry.ts';
import type { AssistantMessage } from '../src/types.ts';
import type { ModelContextReader } from './modelContext.ts';

export interface ModelDependencies {
  settings: ResolvedModelSettings;
  registry: ToolRegistry;
  contexts: ModelContextReader;
}

/** Creates the OpenAI client once per worker; Temporal's retry policy is the only retry. */
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
 * reference, format it with every registered tool, call the endpoint, and parse the reply.
 */
export async function callModel(
  deps: ModelDependencies,
  openai: OpenAI,
  input: CallModelInput,
): Promise<AssistantMessage> {
  const context = Context.current();
  const execution = context.info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('callModel runs only inside a conversation workflow');
  const { systemPrompt, messages } = await deps.contexts.read(
    execution.workflowId,
    execution.runId,
    input.messageCount,
  );
  const model = input.model ?? deps.settings.model;
  await deps.registry.refresh();
  const tools = deps.registry.tools();
  try {
    const completion = await openai.chat.completions.create(
      {
        model,
        messages: formatMessages(systemPrompt, messages),
        ...(tools.length > 0 ? { tools: formatTools(tools) } : {}),
      },
      { signal: context.cancellationSignal },
    );
    return parseAssistantMessage(completion, model);
  } catch (error) {
    throw classifyModelError(error);
  }
}
