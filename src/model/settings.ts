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
}

export interface ResolvedModelSettings {
  baseURL: string | undefined;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxContextBytes: number;
}

/** About 250 000 tokens of text: more than most models take, far less than a months-long transcript. */
export const DEFAULT_MAX_CONTEXT_BYTES = 1_000_000;

export const DEFAULT_MODEL = 'gpt-4o-mini';

/** Fills what the caller left out from the environment. */
export function resolveModelSettings(
  settings: ModelSettings = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedModelSettings {
  // An empty variable (`OPENAI_API_KEY=` in a .env file, a compose pass-through) counts as unset.
  const fromEnv = (name: string): string | undefined => env[name] || undefined;
  return {
    baseURL: settings.baseURL ?? fromEnv('OPENAI_BASE_URL'),
    apiKey: settings.apiKey ?? fromEnv('OPENAI_API_KEY') ?? 'not-needed',
    model: settings.model ?? fromEnv('YIEM_MODEL') ?? DEFAULT_MODEL,
    timeoutMs: settings.timeoutMs ?? 60_000,
    maxContextBytes:
      settings.maxContextBytes ??
      positiveInteger(fromEnv('YIEM_MAX_CONTEXT_BYTES')) ??
      DEFAULT_MAX_CONTEXT_BYTES,
  };
}

function positiveInteger(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(text)) throw new Error(`YIEM_MAX_CONTEXT_BYTES=${text}: expected a number of bytes`);
  return Number(text);
}
