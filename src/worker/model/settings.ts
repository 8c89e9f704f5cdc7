import { DEFAULT_MAX_CONTEXT_BYTES } from '../../contract/limits.ts';
import type { ModelSettings } from '../../contract/types.ts';

export interface ResolvedModelSettings {
  baseURL: string | undefined;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxContextBytes: number;
}

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
