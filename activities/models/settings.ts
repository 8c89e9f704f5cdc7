import { BYTES_PER_TOKEN, DEFAULT_MAX_CONTEXT_BYTES } from '../../src/contract/limits.ts';
import type { ModelPrice, ModelSettings } from '../../src/contract/types/models.ts';
import { processEnvironment } from '../../src/infrastructure/environment.ts';
import { checkedPrices, pricesFromEnv } from './prices.ts';

export interface ResolvedModelSettings {
  baseURL: string | undefined;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxContextBytes: number;
  /** Context windows in tokens, by model name. */
  maxContextTokens?: Record<string, number>;
  /** Prices by model name; absent: no call has a cost. */
  prices?: Record<string, ModelPrice>;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';

/** Where the `openai` client sends requests when no base URL is set. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Fills what the caller left out from the environment. */
export function resolveModelSettings(
  settings: ModelSettings = {},
  env: NodeJS.ProcessEnv = processEnvironment(),
): ResolvedModelSettings {
  // An empty variable (`OPENAI_API_KEY=` in a .env file, a compose pass-through) counts as unset.
  const fromEnv = (name: string): string | undefined => env[name] || undefined;
  const baseURL =
    settings.baseURL === undefined
      ? checkedBaseURL(fromEnv('OPENAI_BASE_URL'), 'OPENAI_BASE_URL')
      : checkedBaseURL(settings.baseURL, 'model.baseURL');
  const prices =
    settings.prices === undefined
      ? pricesFromEnv(fromEnv('YIEM_MODEL_PRICES'))
      : checkedPrices(settings.prices, 'model.prices');
  return {
    baseURL,
    apiKey: settings.apiKey ?? fromEnv('OPENAI_API_KEY') ?? 'not-needed',
    model: settings.model ?? fromEnv('YIEM_MODEL') ?? DEFAULT_MODEL,
    timeoutMs: settings.timeoutMs ?? 60_000,
    maxContextBytes:
      settings.maxContextBytes ??
      positiveInteger(fromEnv('YIEM_MAX_CONTEXT_BYTES')) ??
      DEFAULT_MAX_CONTEXT_BYTES,
    ...(settings.maxContextTokens ? { maxContextTokens: settings.maxContextTokens } : {}),
    ...(prices ? { prices } : {}),
  };
}

/** A model's context window in bytes: the worker's, or less for a model whose window in tokens is known. */
export function contextWindowBytes(
  settings: Pick<ResolvedModelSettings, 'maxContextBytes' | 'maxContextTokens'>,
  model: string,
): number {
  const tokens = settings.maxContextTokens?.[model];
  return tokens === undefined
    ? settings.maxContextBytes
    : Math.min(settings.maxContextBytes, tokens * BYTES_PER_TOKEN);
}

/** The endpoint and model a worker's calls go to, as its start line and its errors name them. */
export function describeModel(settings: Pick<ResolvedModelSettings, 'baseURL' | 'model'>): string {
  return `model ${settings.model} at ${modelEndpoint(settings)}`;
}

export function modelEndpoint(settings: Pick<ResolvedModelSettings, 'baseURL'>): string {
  return settings.baseURL ?? OPENAI_DEFAULT_BASE_URL;
}

/** A base URL that is not http(s) fails every call; it is refused when the worker starts instead. */
function checkedBaseURL(value: string | undefined, source: string): string | undefined {
  if (value === undefined) return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    // Not a URL at all: the error below says what is expected.
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new Error(
      `${source}=${value} is not an http(s) URL: give the model endpoint's base URL, e.g. http://localhost:11434/v1`,
    );
  }
  return value;
}

function positiveInteger(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(text)) throw new Error(`YIEM_MAX_CONTEXT_BYTES=${text}: expected a number of bytes`);
  return Number(text);
}
