import type { Usage } from '../../src/contract/types/base.ts';
import type { ModelPrice } from '../../src/contract/types/models.ts';

/**
 * `usage` with its cost from the price table: the price of the model the call asked for, else of
 * the model the endpoint says answered. Unchanged when neither has a price.
 */
export function withCost(
  usage: Usage | null,
  prices: Readonly<Record<string, ModelPrice>>,
  models: readonly string[],
): Usage | null {
  if (!usage) return usage;
  const price = models.map((model) => prices[model]).find((found) => found !== undefined);
  if (!price) return usage;
  const cost =
    (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1e6;
  return { ...usage, cost };
}

/** The price table, checked: every model's two prices must be numbers of at least 0. */
export function checkedPrices(prices: unknown, source: string): Record<string, ModelPrice> {
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) {
    throw new Error(
      `${source} must be an object of prices by model name, e.g. {"gpt-4o-mini": {"inputPerMillion": 0.15, "outputPerMillion": 0.6}}`,
    );
  }
  for (const [model, price] of Object.entries(prices)) {
    for (const field of ['inputPerMillion', 'outputPerMillion'] as const) {
      const value = (price as Record<string, unknown> | null)?.[field];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new Error(
          `${source}: ${model}.${field} must be a number of at least 0, got ${JSON.stringify(value)}`,
        );
      }
    }
  }
  return prices as Record<string, ModelPrice>;
}

/** The price table of `YIEM_MODEL_PRICES` (JSON), if set. */
export function pricesFromEnv(text: string | undefined): Record<string, ModelPrice> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`YIEM_MODEL_PRICES is not JSON: ${(error as Error).message}`);
  }
  return checkedPrices(parsed, 'YIEM_MODEL_PRICES');
}
