import { readFile } from 'node:fs/promises';
import { describeThrown } from '../../src/contract/thrown.ts';
import type { ModelDefinition, ModelOptions } from '../../src/contract/types/models.ts';
import { processEnvironment } from '../../src/infrastructure/environment.ts';
import { resolveModelTable } from './models.ts';

/** A model of a models file: a `ModelDefinition` whose key may be named by environment variable. */
type FileModel = ModelDefinition & { apiKeyEnv?: string };

/**
 * The `models`, `defaultModel`, `fallbacks` and `maxRateLimitWaitMs` options from a JSON file
 * (`yiem worker --models FILE`), checked as the worker would check them. A model's key is best named
 * by `apiKeyEnv` (the variable that holds it), so the file holds no secret.
 */
export async function loadModelsConfig(
  file: string,
  env: NodeJS.ProcessEnv = processEnvironment(),
): Promise<Omit<ModelOptions, 'model' | 'route'>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`Models file ${file}: ${describeThrown(error)}`);
  }
  const given = (parsed ?? {}) as { models?: unknown } & Omit<ModelOptions, 'models'>;
  if (typeof given.models !== 'object' || given.models === null || Array.isArray(given.models)) {
    throw new Error(
      `Models file ${file}: expected { "models": { "<name>": { "baseURL": …, "apiKeyEnv": … } } }`,
    );
  }
  try {
    const models: Record<string, ModelDefinition> = {};
    for (const [name, { apiKeyEnv, ...model }] of Object.entries(given.models as Record<string, FileModel>)) {
      if (apiKeyEnv !== undefined && !env[apiKeyEnv]) {
        throw new Error(`models.${name}.apiKeyEnv names ${apiKeyEnv}, which is not set`);
      }
      models[name] = apiKeyEnv === undefined ? model : { ...model, apiKey: env[apiKeyEnv] as string };
    }
    const options = {
      models,
      ...(given.defaultModel !== undefined ? { defaultModel: given.defaultModel } : {}),
      ...(given.fallbacks !== undefined ? { fallbacks: given.fallbacks } : {}),
      ...(given.maxRateLimitWaitMs !== undefined ? { maxRateLimitWaitMs: given.maxRateLimitWaitMs } : {}),
    };
    resolveModelTable(options, env);
    return options;
  } catch (error) {
    throw new Error(`Models file ${file}: ${describeThrown(error)}`);
  }
}
