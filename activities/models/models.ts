import { ApplicationFailure } from '@temporalio/common';
import type { ModelRoutingInfo, RouteModelInput } from '../../src/contract/protocol.ts';
import { describeThrown } from '../../src/contract/thrown.ts';
import type {
  ModelDefinition,
  ModelFallback,
  ModelOptions,
  ModelRateLimit,
  ModelRoute,
} from '../../src/contract/types/models.ts';
import { processEnvironment } from '../../src/infrastructure/environment.ts';
import { worthAFallback } from './errors.ts';
import {
  describeModel,
  modelEndpoint,
  type ResolvedModelSettings,
  resolveModelSettings,
} from './settings.ts';

/** A 429 asking to wait longer than this (or not saying) moves a call with fallbacks to its next model. */
export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 10_000;

/** One model as a worker calls it: its name in `models` and its endpoint's settings. */
export interface WorkerModel {
  name: string;
  settings: ResolvedModelSettings;
  rateLimit?: ModelRateLimit;
}

/** A worker's models, checked: what every model call resolves its model name against. */
export interface ModelTable {
  /** The model of a conversation that names none. */
  defaultModel: string;
  /** Every model by the name conversations use for it. */
  models: ReadonlyMap<string, WorkerModel>;
  /**
   * A worker configured with one model (`model`, not `models`) sends any other name a conversation
   * asks for to that model's endpoint, as it always did; a worker with `models` refuses unknown names.
   */
  anyName: boolean;
  /** For a model, the models tried in order when it cannot answer. */
  fallbacks: Readonly<Record<string, readonly string[]>>;
  /** Chooses each call's model; undefined: the requested one. */
  route: ModelRoute | undefined;
  /** A 429 asking to wait longer than this moves the call to its next fallback. */
  maxRateLimitWaitMs: number;
}

/** The task queue of a rate-limited model's calls: one per model, whose rate the server enforces. */
export function modelQueueName(taskQueue: string, model: string): string {
  return `${taskQueue}-model-${model}`;
}

/**
 * The worker's main task queue, from the queue a model call runs on (its model's own queue, or the
 * main queue itself for a worker of plain Temporal with only the plugin).
 */
export function mainQueueOf(activityQueue: string, model: string): string {
  const suffix = modelQueueName('', model);
  return activityQueue.endsWith(suffix) ? activityQueue.slice(0, -suffix.length) : activityQueue;
}

/**
 * The worker's models from its options and the environment, checked when the worker starts: an
 * unknown default or fallback, a bad rate limit, or a fallback onto a rate-limited model fails here
 * rather than in every turn.
 */
export function resolveModelTable(
  options: ModelOptions,
  env: NodeJS.ProcessEnv = processEnvironment(),
): ModelTable {
  const maxRateLimitWaitMs = options.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
  if (!Number.isFinite(maxRateLimitWaitMs) || maxRateLimitWaitMs < 0) {
    throw new Error(`maxRateLimitWaitMs must be a number of milliseconds, got ${maxRateLimitWaitMs}`);
  }
  if (!options.models) {
    if (options.defaultModel !== undefined || options.fallbacks !== undefined) {
      throw new Error('defaultModel and fallbacks name models of `models`: give `models` too');
    }
    return {
      ...singleModelTable(resolveModelSettings(options.model, env)),
      route: options.route,
      maxRateLimitWaitMs,
    };
  }
  if (options.model !== undefined) throw new Error('Give either `model` (one model) or `models`, not both');
  const names = Object.keys(options.models);
  if (names.length === 0) throw new Error('`models` names no model: give at least one');
  const models = new Map<string, WorkerModel>();
  for (const [name, definition] of Object.entries(options.models)) {
    models.set(name, workerModel(name, definition, env));
  }
  const defaultModel = options.defaultModel ?? (names[0] as string);
  if (!models.has(defaultModel)) {
    throw new Error(`defaultModel "${defaultModel}" is not one of models (${names.join(', ')})`);
  }
  const fallbacks = options.fallbacks ?? {};
  for (const [from, list] of Object.entries(fallbacks)) {
    if (!models.has(from))
      throw new Error(`fallbacks.${from}: no model "${from}" in models (${names.join(', ')})`);
    if (!Array.isArray(list)) throw new Error(`fallbacks.${from} must be a list of model names`);
    for (const to of list) {
      const target = models.get(to);
      if (!target)
        throw new Error(`fallbacks.${from} lists "${to}", which is not one of models (${names.join(', ')})`);
      if (to === from) throw new Error(`fallbacks.${from} lists the model itself`);
      // A fallback is called from the failing model's activity, on that model's task queue: a
      // rate-limited fallback's calls would bypass its own queue and so its limit.
      if (target.rateLimit) {
        throw new Error(
          `fallbacks.${from} lists "${to}", which has a rateLimit: a fallback is called from the first model's task queue, so its limit could not hold`,
        );
      }
    }
  }
  return { defaultModel, models, anyName: false, fallbacks, route: options.route, maxRateLimitWaitMs };
}

/** The table of a worker of one model, which serves any name a conversation asks for (`anyName`). */
export function singleModelTable(settings: ResolvedModelSettings): ModelTable {
  return {
    defaultModel: settings.model,
    models: new Map([[settings.model, { name: settings.model, settings }]]),
    anyName: true,
    fallbacks: {},
    route: undefined,
    maxRateLimitWaitMs: DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
  };
}

/** The models of activity dependencies given either one model's settings or a whole table. */
export function modelTableOf(given: { model?: ResolvedModelSettings; models?: ModelTable }): ModelTable {
  if (given.models) return given.models;
  if (given.model) return singleModelTable(given.model);
  throw new Error('The agent activities need `model` (one model) or `models` (resolveModelTable)');
}

function workerModel(name: string, definition: ModelDefinition, env: NodeJS.ProcessEnv): WorkerModel {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new Error(
      `models: "${name}" is not a usable model name (1-64 letters, digits, ".", "_" or "-"; it names a task queue)`,
    );
  }
  const { price, rateLimit, ...settings } = definition;
  const prices = price ? { ...settings.prices, [name]: price } : settings.prices;
  const resolved = resolveModelSettings(
    { ...settings, model: settings.model ?? name, ...(prices ? { prices } : {}) },
    env,
  );
  if (rateLimit !== undefined) checkRateLimit(name, rateLimit);
  return { name, settings: resolved, ...(rateLimit ? { rateLimit } : {}) };
}

function checkRateLimit(name: string, limit: ModelRateLimit): void {
  checkAboveZero(name, 'requestsPerMinute', limit?.requestsPerMinute);
  if (limit.tokensPerMinute !== undefined) checkAboveZero(name, 'tokensPerMinute', limit.tokensPerMinute);
  if (limit.windowMs !== undefined) checkAboveZero(name, 'windowMs', limit.windowMs);
}

function checkAboveZero(name: string, field: keyof ModelRateLimit, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new Error(
      `models.${name}.rateLimit.${field} must be a number above 0, got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * The model a call named (`undefined`: the default). An unknown name fails the call for good with
 * the names the worker serves: retrying would not make the name known.
 */
export function modelNamed(
  table: ModelTable,
  name: string | undefined,
  source = 'The conversation',
): WorkerModel {
  const wanted = name ?? table.defaultModel;
  const found = table.models.get(wanted);
  if (found) return found;
  if (table.anyName) {
    const only = table.models.get(table.defaultModel) as WorkerModel;
    return { name: wanted, settings: { ...only.settings, model: wanted } };
  }
  throw ApplicationFailure.create({
    message: `${source} asks for model "${wanted}", which this worker does not serve (its models: ${[...table.models.keys()].join(', ')})`,
    type: 'UnknownModel',
    nonRetryable: true,
  });
}

/** The model the worker's `route` picks for a call (`undefined`: the one requested), checked like any name. */
export async function routedModel(table: ModelTable, input: RouteModelInput): Promise<string> {
  const chosen = await table.route?.(input);
  if (chosen === undefined) return modelNamed(table, input.requested).name;
  return modelNamed(table, chosen, "The worker's route").name;
}

/** The model and then its fallbacks, in the order a call tries them. */
export function modelsToTry(table: ModelTable, first: WorkerModel): WorkerModel[] {
  const rest = (table.fallbacks[first.name] ?? []).map((name) => table.models.get(name) as WorkerModel);
  return [first, ...rest];
}

/** One model's answer, or its classified failure and whether it had begun to answer. */
export type ModelAttempt<T> = { reply: T } | { reply?: undefined; failure: unknown; answered: boolean };

/**
 * A call to `first`, then to each of its fallbacks in turn while the one before could not answer at
 * all (`worthAFallback`: unreachable, timed out, 5xx, a 429 asking for a long wait); every model call
 * of a worker (the turn's, a compaction's, a guardrail's) tries its models here. A model that began
 * to answer is not left; when the last one fails too, its failure is thrown.
 */
export async function withFallbacks<T>(
  table: ModelTable,
  first: WorkerModel,
  attempt: (model: WorkerModel) => Promise<ModelAttempt<T>>,
  onFallback: (fallback: ModelFallback) => void = () => {},
): Promise<{ reply: T; model: WorkerModel; fallbacks: ModelFallback[] }> {
  const candidates = modelsToTry(table, first);
  const fallbacks: ModelFallback[] = [];
  for (let index = 0; ; index++) {
    const model = candidates[index] as WorkerModel;
    const next = candidates[index + 1];
    const result = await attempt(model);
    if (!('failure' in result)) return { reply: result.reply, model, fallbacks };
    if (!next || result.answered || !worthAFallback(result.failure, table.maxRateLimitWaitMs)) {
      throw result.failure;
    }
    const fallback = { from: model.name, to: next.name, cause: describeThrown(result.failure) };
    fallbacks.push(fallback);
    onFallback(fallback);
  }
}

/** A call that answers whole or not at all (no stream): its failure, classified, is worth a fallback or not. */
export async function wholeAttempt<T>(call: () => Promise<T>): Promise<ModelAttempt<T>> {
  try {
    return { reply: await call() };
  } catch (failure) {
    return { failure, answered: false };
  }
}

/** What the workflow learns once per run: the default, the rate-limited models' queues, whether a route decides. */
export function routingInfo(table: ModelTable, taskQueue: string): ModelRoutingInfo {
  const queues: Record<string, string> = {};
  for (const model of table.models.values()) {
    if (model.rateLimit) queues[model.name] = modelQueueName(taskQueue, model.name);
  }
  return { defaultModel: table.defaultModel, queues, routed: table.route !== undefined };
}

/**
 * The worker's models in one line, for its start line and its signature to other workers of the
 * queue (`identityWithSignature`, which expects it to begin with `model `): `model <name> at
 * <endpoint>`, or for several `model fast: llama3.1 at <endpoint>; model strong: gpt-4o at <endpoint>`.
 */
export function describeModels(table: ModelTable): string {
  const models = [...table.models.values()];
  if (models.length === 1) return describeModel((models[0] as WorkerModel).settings);
  return models
    .map(({ name, settings }) => `model ${name}: ${settings.model} at ${modelEndpoint(settings)}`)
    .join('; ');
}
