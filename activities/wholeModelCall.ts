import type { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type OpenAI from 'openai';
import type { ModelFallback } from '../src/contract/types/models.ts';
import type { ActivityEventPublisher } from './events.ts';
import { classifyModelError } from './models/errors.ts';
import { type ModelTable, type WorkerModel, wholeAttempt, withFallbacks } from './models/models.ts';
import { modelEndpoint } from './models/settings.ts';
import { reserveTokens } from './tokenLimit.ts';

/** What the model calls of an activity other than `callModel` need of the worker. */
export interface WholeModelCallDependencies {
  models: ModelTable;
  /** The OpenAI client of a model, one per model and worker. */
  clientFor: (model: WorkerModel) => OpenAI;
  /** A client on the worker's cluster, for the limiter of a model with `rateLimit.tokensPerMinute`. */
  getClient: () => Promise<Client>;
}

/** Publishes each switch to a fallback as a `modelFallback` event, as every model call of a worker does. */
export function publishFallback(events: ActivityEventPublisher): (fallback: ModelFallback) => void {
  return (fallback) => events.publish({ type: 'modelFallback', ...fallback }, { now: true });
}

/**
 * The model calls an activity makes besides the turn's streamed one (a compaction's summary, a
 * guardrail's `complete()`), held to the same rules as `callModel`'s: the model, then its fallbacks
 * (`withFallbacks`), each switch a `modelFallback` event; each request reserving its tokens in the
 * model's window first (`reserveTokens`) and correcting them with its usage. The request rate is the
 * workflow's part: it schedules the activity on the model's task queue (workflows/workerActivities.ts).
 */
export class WholeModelCalls {
  readonly #deps: WholeModelCallDependencies;
  readonly #context: Context;
  readonly #events: ActivityEventPublisher;
  /** Numbers the attempt's requests: each one is a reservation of its own in the token window. */
  #requests = 0;

  constructor(deps: WholeModelCallDependencies, context: Context, events: ActivityEventPublisher) {
    this.#deps = deps;
    this.#context = context;
    this.#events = events;
  }

  /** The reply's text from `first` or the fallback that answered, and which one that was. */
  async complete(
    first: WorkerModel,
    system: string,
    user: string,
  ): Promise<{ text: string; model: WorkerModel }> {
    const { reply, model } = await withFallbacks(
      this.#deps.models,
      first,
      (candidate) => wholeAttempt(() => this.#request(candidate, system, user)),
      publishFallback(this.#events),
    );
    return { text: reply, model };
  }

  async #request(target: WorkerModel, system: string, user: string): Promise<string> {
    const { settings } = target;
    const request = {
      model: settings.model,
      messages: [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: user },
      ],
    };
    const client = await this.#deps.getClient();
    const reservation = await reserveTokens(client, this.#context, target, request, this.#requests++);
    let completion: OpenAI.ChatCompletion;
    try {
      completion = await this.#deps
        .clientFor(target)
        .chat.completions.create(request, { signal: this.#context.cancellationSignal });
    } catch (error) {
      throw classifyModelError(error, { endpoint: modelEndpoint(settings), model: settings.model });
    }
    // An endpoint that reports no usage leaves the estimate in the window.
    const used = completion.usage?.total_tokens;
    if (used !== undefined) await reservation?.settle(used);
    const content = completion.choices[0]?.message?.content;
    return typeof content === 'string' ? content : '';
  }
}
