import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { StreamedCompletion } from '../../activities/streamedContent.ts';

const chunk = (
  delta: ChatCompletionChunk.Choice['delta'],
  finish: string | null = null,
): ChatCompletionChunk =>
  ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  }) as ChatCompletionChunk;

describe('a streamed reply assembled from its chunks', () => {
  it('joins text and tool-call arguments, keeping a name that a provider repeats in every delta', () => {
    const reply = new StreamedCompletion();
    const added = [
      reply.add(chunk({ role: 'assistant', content: 'Look' })),
      reply.add(chunk({ content: 'ing.' })),
      reply.add(
        chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'lookup', arguments: '{"ci' } }] }),
      ),
      reply.add(
        chunk({ tool_calls: [{ index: 0, function: { name: 'lookup', arguments: 'ty":"Paris"}' } }] }),
      ),
      reply.add(chunk({}, 'tool_calls')),
    ];
    expect(added.join('')).toBe('Looking.');
    const { message, finish_reason } = reply.completion().choices[0] ?? {};
    expect(finish_reason).toBe('tool_calls');
    expect(message?.content).toBe('Looking.');
    expect(message?.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"city":"Paris"}' } },
    ]);
  });

  it('refuses a stream cut short, before its finish reason', () => {
    const reply = new StreamedCompletion();
    reply.add(chunk({ content: 'Half a' }));
    expect(() => reply.completion()).toThrow('The model stream ended before the reply was complete');
  });
});
