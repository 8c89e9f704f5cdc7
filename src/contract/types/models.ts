/**
 * Models (layer 1): where and how a worker reaches its models, their prices and rate limits, how a
 * call picks its model, and how model calls are timed. `ModelFallback` is here, below messages,
 * because an assistant message records it.
 */

import type { ActivityPolicy } from './base.ts';

/** Timeouts and retries of model calls (`ConversationOptions.modelPolicy`), and where they run. */
export interface ModelCallPolicy extends ActivityPolicy {
  /**
   * `true` runs each model call that nobody follows as a Temporal local activity, inside the workflow
   * task that asked for it, as Temporal's own agent samples configure theirs: no activity task and
   * no workflow task of its own, so a text turn is one workflow task and answers sooner, for less
   * server CPU. A call that somebody follows stays an activity, so its text streams live; so do the
   * first call of a run and a call whose new entries are too large to carry (`CallModelInput.tail`),
   * a call to a rate-limited model's queue, and a call whose worker has lost
   * the conversation's context (it was restarted, or another worker ran the previous call): a local
   * activity cannot ask the workflow for it, so such an attempt ends at once and the call runs as an
   * activity. What it gives up, as a `localActivity` tool does: no heartbeat (a worker lost mid-call
   * runs it again once the workflow task times out); queries, signals, cancellation and new messages
   * wait until the call ends or the worker extends the task (every 1.6 s, 8 s in a sub-agent); the Web
   * UI shows a marker instead of a `callModel` activity. Compaction and guardrail calls stay
   * activities. Default `false`.
   */
  localActivity?: boolean;
}

/** A model call moved from one model to the next of its fallback list (`AgentWorkerOptions.models.fallbacks`). */
export interface ModelFallback {
  /** The model that could not answer. */
  from: string;
  /** The model asked next. */
  to: string;
  /** Why `from` could not answer: the error's message (unreachable, timeout, 5xx, a long 429). */
  cause: string;
}

/** Where and how the worker reaches the model. Lives on the worker only: none of it enters history. */
export interface ModelSettings {
  /** An OpenAI-compatible Chat Completions endpoint. Default: env `OPENAI_BASE_URL`, else OpenAI's. */
  baseURL?: string;
  /** Default: env `OPENAI_API_KEY`. Local endpoints that need no key get a placeholder. */
  apiKey?: string;
  /** Default model name: env `YIEM_MODEL`, else `gpt-4o-mini`. A conversation may override it. */
  model?: string;
  /** How long one HTTP request may take before it counts as a timeout (retried). Default 60 000 ms. */
  timeoutMs?: number;
  /**
   * The context window, in bytes of message JSON: a model call sends the latest turns that fit, never
   * cutting into a turn, and always the current turn whole. The transcript itself keeps everything.
   * Default: env `YIEM_MAX_CONTEXT_BYTES`, else 1 MB.
   */
  maxContextBytes?: number;
  /**
   * Context windows in tokens, by model name: the window of a model named here is the smaller of
   * `maxContextBytes` and its tokens at an estimated 4 bytes a token.
   */
  maxContextTokens?: Record<string, number>;
  /**
   * Prices per model name (as conversations name them, or as the endpoint reports them), so that
   * each model call's `usage.cost` is known and a budget can limit cost. Default: env
   * `YIEM_MODEL_PRICES` (the same as JSON), else none.
   */
  prices?: Record<string, ModelPrice>;
}

/**
 * One of a worker's models (`AgentWorkerOptions.models.models`): its endpoint, key and settings, what it
 * costs and how fast its provider lets it be called. Lives on the worker: conversations name it only.
 */
export interface ModelDefinition extends ModelSettings {
  /** The name sent to the endpoint. Default: the model's name in `models`. */
  model?: string;
  /** Its price; the same as `prices: { [name]: price }`. */
  price?: ModelPrice;
  /**
   * The provider's limit for this model, held by every worker together: calls to a model with
   * `requestsPerMinute` go through a task queue of their own (`<taskQueue>-model-<name>`) whose
   * dispatch rate the Temporal server enforces for the whole fleet; `tokensPerMinute` is held by
   * a limiter workflow per model.
   */
  rateLimit?: ModelRateLimit;
}

/**
 * A provider's rate limit for one model (`ModelDefinition.rateLimit`), held across every worker and
 * conversation. A provider's 429 is still retried after its Retry-After.
 */
export interface ModelRateLimit {
  /** Model calls per minute across every worker and conversation: enforced by the task queue's rate. */
  requestsPerMinute: number;
  /**
   * Tokens per minute across every worker and conversation: each call reserves its estimated input
   * tokens (its request's bytes / 4) in a sliding window kept by one limiter workflow per model
   * (`yiem-token-limiter-<taskQueue>-<model>`), waits while the window is full, and corrects the
   * reservation with the usage the provider reports. A single call estimated above the whole
   * limit fails. Default: not limited.
   */
  tokensPerMinute?: number;
  /**
   * The token window's length in milliseconds. Default 60 000 (what "per minute" means): a
   * shorter window is for tests only, which need not wait a minute.
   */
  windowMs?: number;
}

/** What a worker's `route` function decides a model call by. */
export interface ModelRouteContext {
  /** The conversation making the call. */
  conversationId: string;
  /** Its turn, from 1. */
  turn: number;
  /** The model the call would use: the prompt's, the agent's, the conversation's, else the worker's default. */
  requested: string;
  /** The active agent's name after a handoff. */
  agent?: string;
  /** Messages in the transcript so far. */
  messageCount: number;
}

/**
 * Chooses each model call's model by name (`AgentWorkerOptions.models.route`); `undefined` keeps `requested`.
 * It runs in an activity (`routeModel`) before each model call, so it may be async and read anything.
 */
export type ModelRoute = (context: ModelRouteContext) => string | undefined | Promise<string | undefined>;

/** A model's price, per million tokens, in the currency budgets are written in. */
export interface ModelPrice {
  /** What a million input (prompt) tokens cost. */
  inputPerMillion: number;
  /** What a million output tokens cost. */
  outputPerMillion: number;
}

/**
 * How a worker is told its models (`AgentWorkerOptions.models`): one `model`, or several `models` by
 * name with a default, fallbacks, a route and how long a 429 may make a call wait.
 */
export interface ModelOptions {
  /** The worker's one model: where its calls go, with what key, settings and prices. Or `models`. */
  model?: ModelSettings;
  /**
   * Several models by name, each with its own endpoint, key, settings, price and rate limit.
   * Conversations pick one by name (`ConversationOptions.model`, `PromptOptions.model`), or `route`
   * does. Names and keys stay on the worker: history only ever holds the names.
   */
  models?: Record<string, ModelDefinition>;
  /** The model of calls that name none. Default: the first of `models`. */
  defaultModel?: string;
  /**
   * Per model, the models tried in order when it cannot answer (connection refused, timeout, 5xx, a
   * 429 asking for more than `maxRateLimitWaitMs`), within the same model call; each switch is a
   * `modelFallback` event and is recorded on the reply (`AssistantMessage.fallbacks`).
   */
  fallbacks?: Record<string, string[]>;
  /** Picks each model call's model (see `ModelRoute`); it runs in a `routeModel` activity before the call. */
  route?: ModelRoute;
  /** A 429 asking to wait longer than this (or not saying how long) moves to the next fallback. Default 10 000 ms. */
  maxRateLimitWaitMs?: number;
}
