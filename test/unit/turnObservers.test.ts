import { describe, expect, it } from 'vitest';
import { observeTurns, runObservedTurn, type TurnObserver } from '../../src/contract/turnObservers.ts';
import type { TurnResult } from '../../src/contract/types/turns.ts';
import { chatReplyAttributes, genAiSpanName } from '../../src/infrastructure/genAiConventions.ts';

const turn = { conversationId: 'c1', turn: 1 };
const completed: TurnResult = { turn: 1, status: 'completed', reply: 'done' };

describe('turn observers', () => {
  it('runs the loop as it is while nobody observes, then through each observer once, the first outermost', async () => {
    const loop = Promise.resolve(completed);
    // No observer: the loop's own promise, no extra step in the workflow.
    expect(runObservedTurn(turn, () => loop)).toBe(loop);

    const seen: string[] = [];
    const observer =
      (name: string): TurnObserver =>
      async (observed, run) => {
        seen.push(`${name} in ${observed.conversationId}#${observed.turn}`);
        const result = await run();
        seen.push(`${name} out ${result.status}`);
        return result;
      };
    const outer = observer('outer');
    observeTurns(outer);
    observeTurns(observer('inner'));
    observeTurns(outer);
    expect(await runObservedTurn(turn, async () => completed)).toBe(completed);
    expect(seen).toEqual(['outer in c1#1', 'inner in c1#1', 'inner out completed', 'outer out completed']);
  });
});

describe('GenAI span names and attributes', () => {
  it('names a span after its operation and what it acts on', () => {
    expect(genAiSpanName('chat', 'gpt-4o-mini')).toBe('chat gpt-4o-mini');
    expect(genAiSpanName('invoke_agent', undefined)).toBe('invoke_agent');
  });

  it('labels a chat span with the reply, its tokens, finish reason and cost only when priced', () => {
    const usage = { inputTokens: 10, outputTokens: 4, totalTokens: 14 };
    expect(
      chatReplyAttributes({ model: 'm-2024', usage: { ...usage, cost: 0.5 }, stopReason: 'toolCalls' }),
    ).toEqual({
      'gen_ai.response.model': 'm-2024',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 4,
      'yiem.cost': 0.5,
    });
    expect(chatReplyAttributes({ model: 'm', usage: null, stopReason: 'stop' })).toEqual({
      'gen_ai.response.model': 'm',
      'gen_ai.response.finish_reasons': ['stop'],
    });
  });
});
