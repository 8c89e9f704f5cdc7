import { describe, expect, it } from 'vitest';
import { withCost } from '../../activities/models/prices.ts';
import { resolveModelSettings } from '../../activities/models/settings.ts';
import {
  addSpend,
  budgetProblem,
  changedBudget,
  exhaustionMessage,
  noSpend,
  parseLimits,
  reachedLimit,
  remaining,
  tighterLimits,
} from '../../src/contract/budget.ts';
import { conversationOptionsProblem } from '../../src/contract/settings.ts';

const spent = (more: Parameters<typeof addSpend>[1]) => addSpend(noSpend(), more);

describe('budgets', () => {
  it('stops a counted step that would pass its limit, and a measured figure once it is spent', () => {
    const spend = spent({ modelCalls: 2, toolCalls: 3, cost: 0.5 });
    expect(reachedLimit(spend, { modelCalls: 3 }, 'turn', { modelCalls: 1 })).toBeNull();
    expect(reachedLimit(spend, { modelCalls: 2 }, 'turn', { modelCalls: 1 })).toMatchObject({
      scope: 'turn',
      limit: 'modelCalls',
      allowed: 2,
    });
    // Model calls are not counted before a tool batch, nor tool calls before a model call.
    expect(reachedLimit(spend, { modelCalls: 2 }, 'turn', { toolCalls: 1 })).toBeNull();
    expect(reachedLimit(spend, { toolCalls: 4 }, 'conversation', { toolCalls: 2 })).toMatchObject({
      limit: 'toolCalls',
    });
    expect(reachedLimit(spend, { cost: 0.6 }, 'turn', { modelCalls: 1 })).toBeNull();
    expect(reachedLimit(spend, { cost: 0.5 }, 'turn', {})).toMatchObject({ limit: 'cost', spent: spend });
  });

  it("adds a sub-agent's spend without its wall time, and bounds it by the tighter rest", () => {
    const parent = spent({ modelCalls: 1, wallTimeSeconds: 10 });
    expect(addSpend(parent, spent({ modelCalls: 4, wallTimeSeconds: 8 }), false)).toMatchObject({
      modelCalls: 5,
      wallTimeSeconds: 10,
    });
    const left = tighterLimits(
      remaining(parent, { modelCalls: 10, cost: 2 }),
      remaining(parent, { modelCalls: 3 }),
    );
    expect(left).toEqual({ modelCalls: 2, cost: 2 });
  });

  it('changes limits by figure, removes them with null, and refuses what is no budget', () => {
    expect(
      changedBudget({ turn: { cost: 1, modelCalls: 5 } }, { turn: { cost: null, toolCalls: 9 } }),
    ).toEqual({
      turn: { modelCalls: 5, toolCalls: 9 },
    });
    expect(budgetProblem({ turn: { cost: -1, calls: 2, modelCalls: 1.5 } })).toBe(
      'turn.cost must be a number of at least 0, got -1; turn.calls is no budget figure (modelCalls, toolCalls, inputTokens, outputTokens, cost, wallTimeSeconds, actions); turn.modelCalls must be a whole number, got 1.5',
    );
    expect(budgetProblem({ turn: { cost: null } })).toContain('turn.cost must be a number');
    expect(budgetProblem({ turn: { cost: null } }, true)).toBeNull();
    expect(conversationOptionsProblem({ systemPrompt: '', budget: { week: {} } })).toBe(
      'Invalid conversation options: budget: "week" is no budget scope (conversation, turn)',
    );
    expect(parseLimits('cost=0.5, modelCalls=none', '--turn')).toEqual({ cost: 0.5, modelCalls: null });
    expect(() => parseLimits('money=3', '--turn')).toThrow('--turn money=3: "money" is no budget figure');
  });

  it('says which limit was reached and how to go on', () => {
    const exhausted = reachedLimit(spent({ cost: 0.0512 }), { cost: 0.05 }, 'turn', {});
    expect(exhausted && exhaustionMessage(exhausted)).toBe(
      "The turn's budget of 0.05 cost is reached (spent 0.0512). The turn stopped at a safe point: raise the budget and resume it (Conversation.raiseBudget, resume), or cancel it.",
    );
  });
});

describe('prices', () => {
  it('prices a call by the model it asked for, else the one that answered', () => {
    const usage = { inputTokens: 1000, outputTokens: 500, totalTokens: 1500 };
    const prices = { small: { inputPerMillion: 1, outputPerMillion: 2 } };
    expect(withCost(usage, prices, ['small', 'small-2024'])?.cost).toBeCloseTo(0.002);
    expect(withCost(usage, prices, ['alias', 'small'])?.cost).toBeCloseTo(0.002);
    expect(withCost(usage, prices, ['other'])).toBe(usage);
  });

  it('reads the price table from YIEM_MODEL_PRICES and refuses one that is not prices', () => {
    expect(
      resolveModelSettings({}, { YIEM_MODEL_PRICES: '{"m":{"inputPerMillion":1,"outputPerMillion":3}}' })
        .prices,
    ).toEqual({ m: { inputPerMillion: 1, outputPerMillion: 3 } });
    expect(() => resolveModelSettings({ prices: { m: { inputPerMillion: 1 } as never } }, {})).toThrow(
      'model.prices: m.outputPerMillion must be a number of at least 0, got undefined',
    );
  });
});
