import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyModelError, worthAFallback } from '../../activities/models/errors.ts';
import {
  describeModels,
  modelNamed,
  modelQueueName,
  modelsToTry,
  resolveModelTable,
  routedModel,
  routingInfo,
} from '../../activities/models/models.ts';
import { loadModelsConfig } from '../../activities/models/modelsFile.ts';
import { identityWithSignature, signatureOf, workerSignature } from '../../activities/taskQueueNeighbours.ts';
import { promptOptionsProblem } from '../../src/contract/settings.ts';
import type { ModelOptions, ModelRouteContext } from '../../src/contract/types/models.ts';

const NO_ENV = {};
const table = (options: ModelOptions) => resolveModelTable(options, NO_ENV);
const TWO: ModelOptions['models'] = {
  fast: { baseURL: 'http://fast.local/v1', apiKey: 'fast-key' },
  strong: {
    baseURL: 'http://strong.local/v1',
    model: 'provider-strong',
    price: { inputPerMillion: 3, outputPerMillion: 15 },
  },
};
const CALL = { conversationId: 'c', turn: 1, requested: 'fast', messageCount: 1 };

describe('resolveModelTable', () => {
  it("keeps today's single model: any name goes to its endpoint under that name", () => {
    const models = table({ model: { baseURL: 'http://one.local/v1', model: 'llama' } });
    expect(models.defaultModel).toBe('llama');
    const other = modelNamed(models, 'special');
    expect(other.settings).toMatchObject({ baseURL: 'http://one.local/v1', model: 'special' });
  });

  it('resolves each named model with its own endpoint, key, provider name and price', () => {
    const models = table({ models: TWO, defaultModel: 'strong' });
    expect(models.defaultModel).toBe('strong');
    expect(modelNamed(models, 'fast').settings).toMatchObject({
      baseURL: 'http://fast.local/v1',
      apiKey: 'fast-key',
      model: 'fast',
    });
    expect(modelNamed(models, undefined).settings).toMatchObject({
      model: 'provider-strong',
      prices: { strong: { inputPerMillion: 3, outputPerMillion: 15 } },
    });
  });

  it('defaults to the first model', () => {
    expect(table({ models: TWO }).defaultModel).toBe('fast');
  });

  it.each<[string, ModelOptions, string]>([
    [
      'an unknown default',
      { models: TWO, defaultModel: 'huge' },
      'defaultModel "huge" is not one of models (fast, strong)',
    ],
    [
      'an unknown fallback',
      { models: TWO, fallbacks: { fast: ['huge'] } },
      'fallbacks.fast lists "huge", which is not one of models (fast, strong)',
    ],
    [
      'fallbacks of an unknown model',
      { models: TWO, fallbacks: { huge: ['fast'] } },
      'fallbacks.huge: no model "huge" in models (fast, strong)',
    ],
    [
      'a model falling back to itself',
      { models: TWO, fallbacks: { fast: ['fast'] } },
      'fallbacks.fast lists the model itself',
    ],
    [
      'a fallback onto a rate-limited model',
      {
        models: { ...TWO, limited: { rateLimit: { requestsPerMinute: 60 } } },
        fallbacks: { fast: ['limited'] },
      },
      'fallbacks.fast lists "limited", which has a rateLimit',
    ],
    [
      'a rate limit of no requests',
      { models: { fast: { rateLimit: { requestsPerMinute: 0 } } } },
      'models.fast.rateLimit.requestsPerMinute must be a number above 0, got 0',
    ],
    [
      'both model and models',
      { model: {}, models: TWO },
      'Give either `model` (one model) or `models`, not both',
    ],
    [
      'fallbacks without models',
      { fallbacks: { a: ['b'] } },
      'defaultModel and fallbacks name models of `models`: give `models` too',
    ],
    ['no models', { models: {} }, '`models` names no model: give at least one'],
    [
      'a name that cannot name a task queue',
      { models: { 'fast model': {} } },
      '"fast model" is not a usable model name',
    ],
    [
      'a bad endpoint',
      { models: { fast: { baseURL: 'fast.local' } } },
      'model.baseURL=fast.local is not an http(s) URL',
    ],
  ])('refuses %s, saying why', (_, options, message) => {
    expect(() => table(options)).toThrow(message);
  });
});

describe('choosing a model', () => {
  const models = table({ models: TWO, fallbacks: { strong: ['fast'] } });

  it('fails an unknown name for good, naming the names the worker serves', () => {
    let thrown: unknown;
    try {
      modelNamed(models, 'gpt-9');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({
      nonRetryable: true,
      type: 'UnknownModel',
      message:
        'The conversation asks for model "gpt-9", which this worker does not serve (its models: fast, strong)',
    });
  });

  it('tries a model, then its fallbacks in order', () => {
    expect(modelsToTry(models, modelNamed(models, 'strong')).map((model) => model.name)).toEqual([
      'strong',
      'fast',
    ]);
    expect(modelsToTry(models, modelNamed(models, 'fast')).map((model) => model.name)).toEqual(['fast']);
  });

  it('tells the workflow the queues of rate-limited models only, and whether a route decides', () => {
    const limited = table({ models: { ...TWO, slow: { rateLimit: { requestsPerMinute: 30 } } } });
    expect(routingInfo(limited, 'agents')).toEqual({
      defaultModel: 'fast',
      queues: { slow: modelQueueName('agents', 'slow') },
      routed: false,
    });
    expect(modelQueueName('agents', 'slow')).toBe('agents-model-slow');
  });
});

describe('describeModels', () => {
  it('names one model as before, and several in a line other workers of the queue can read', () => {
    expect(describeModels(table({ model: { baseURL: 'http://one.local/v1', model: 'llama' } }))).toBe(
      'model llama at http://one.local/v1',
    );
    const several = describeModels(table({ models: TWO }));
    expect(several).toBe(
      'model fast: fast at http://fast.local/v1; model strong: provider-strong at http://strong.local/v1',
    );
    expect(signatureOf(identityWithSignature('1@host', workerSignature(several, ['a'])))).toEqual(
      workerSignature(several, ['a']),
    );
  });
});

describe('the route function', () => {
  const seen: ModelRouteContext[] = [];
  const routed = table({
    models: TWO,
    route: async (context) => {
      seen.push(context);
      if (context.turn === 2) return 'strong';
      if (context.turn === 3) return 'huge';
      return undefined;
    },
  });

  it('keeps the requested model when it answers undefined, and picks its own otherwise', async () => {
    expect(await routedModel(routed, CALL)).toBe('fast');
    expect(await routedModel(routed, { ...CALL, turn: 2 })).toBe('strong');
    expect(seen.at(-1)).toEqual({ ...CALL, turn: 2 });
    expect(routingInfo(routed, 'q').routed).toBe(true);
  });

  it('fails clearly when it picks a model the worker lacks', async () => {
    await expect(routedModel(routed, { ...CALL, turn: 3 })).rejects.toThrow(
      `The worker's route asks for model "huge", which this worker does not serve (its models: fast, strong)`,
    );
  });

  it('names the conversation when the requested model is unknown', async () => {
    await expect(routedModel(routed, { ...CALL, requested: 'gpt-9' })).rejects.toThrow(
      'The conversation asks for model "gpt-9"',
    );
  });
});

describe('worthAFallback', () => {
  const target = { endpoint: 'http://fast.local/v1', model: 'fast' };
  const status = (code: number, headers: Record<string, string> = {}) =>
    classifyModelError(
      APIError.generate(code, { error: { message: 'no' } }, 'no', new Headers(headers)),
      target,
    );

  it('moves on past a refused connection, a 5xx and a 429 asking for a long wait or none', () => {
    expect(
      worthAFallback(classifyModelError(new APIConnectionError({ message: 'refused' }), target), 10_000),
    ).toBe(true);
    expect(worthAFallback(status(500), 10_000)).toBe(true);
    expect(worthAFallback(status(503), 10_000)).toBe(true);
    expect(worthAFallback(status(429, { 'retry-after': '60' }), 10_000)).toBe(true);
    expect(worthAFallback(status(429), 10_000)).toBe(true);
  });

  it('stays on the model for a short 429 and for requests the endpoint rejects', () => {
    expect(worthAFallback(status(429, { 'retry-after': '2' }), 10_000)).toBe(false);
    expect(worthAFallback(status(400), 10_000)).toBe(false);
    expect(worthAFallback(status(401), 10_000)).toBe(false);
    expect(worthAFallback(new Error('aborted'), 10_000)).toBe(false);
  });
});

describe('promptOptionsProblem', () => {
  it('accepts no options and a model name', () => {
    expect(promptOptionsProblem(undefined)).toBeNull();
    expect(promptOptionsProblem({ model: 'fast' })).toBeNull();
  });

  it.each<[unknown, string]>([
    ['fast', 'Prompt options must be an object such as { delivery: "followUp", key: "m-1", model: "fast" }'],
    [{ model: 3 }, 'Prompt options: model must be a model name, got 3'],
    [{ modle: 'fast' }, 'Prompt options: "modle" is no option (delivery, key, model)'],
  ])('refuses %j, saying why', (options, message) => {
    expect(promptOptionsProblem(options)).toBe(message);
  });
});

describe('loadModelsConfig (yiem worker --models FILE)', () => {
  const write = async (content: string): Promise<string> => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'yiem-models-')), 'models.json');
    await writeFile(file, content);
    return file;
  };

  it('reads the models with their keys from the variables apiKeyEnv names', async () => {
    const file = await write(
      JSON.stringify({
        models: {
          fast: { baseURL: 'http://fast.local/v1', apiKeyEnv: 'FAST_KEY' },
          strong: { baseURL: 'http://strong.local/v1', rateLimit: { requestsPerMinute: 60 } },
        },
        defaultModel: 'strong',
        fallbacks: { strong: ['fast'] },
      }),
    );
    expect(await loadModelsConfig(file, { FAST_KEY: 'secret' })).toEqual({
      models: {
        fast: { baseURL: 'http://fast.local/v1', apiKey: 'secret' },
        strong: { baseURL: 'http://strong.local/v1', rateLimit: { requestsPerMinute: 60 } },
      },
      defaultModel: 'strong',
      fallbacks: { strong: ['fast'] },
    });
  });

  it.each<[string, string, string]>([
    ['not JSON', 'nope', 'Unexpected token'],
    ['no models', '{}', 'expected { "models": { "<name>": {'],
    [
      'an unset key variable',
      '{"models":{"fast":{"apiKeyEnv":"NOPE"}}}',
      'models.fast.apiKeyEnv names NOPE, which is not set',
    ],
    [
      'an unknown default',
      '{"models":{"fast":{}},"defaultModel":"slow"}',
      'defaultModel "slow" is not one of models (fast)',
    ],
  ])('refuses a file with %s, naming the file', async (_, content, message) => {
    const file = await write(content);
    await expect(loadModelsConfig(file, {})).rejects.toThrow(`Models file ${file}: `);
    await expect(loadModelsConfig(file, {})).rejects.toThrow(message);
  });
});
