import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TurnView } from '../../src/cli/turnView.ts';
import type { ConversationEvent, ConversationEventItem } from '../../src/types.ts';

function captured(): { output: Writable; text: () => string } {
  let text = '';
  const output = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { output, text: () => text };
}

let offset = 0;
const item = (event: ConversationEvent): ConversationEventItem => ({ ...event, offset: offset++ });
const origin = (attempt: number, seq: number) => ({ turn: 1, attempt, seq });

describe('the chat view of a conversation’s events (as piped, without a terminal)', () => {
  it('marks a retried model call and starts its text over on a new line', () => {
    const { output, text } = captured();
    const view = new TurnView({ output, interactive: false, askApproval: async () => true });
    view.show(item({ type: 'turnStart', ...origin(1, 0) }));
    view.show(item({ type: 'messageStart', model: 'm', ...origin(1, 0) }));
    view.show(item({ type: 'textDelta', text: 'The answ', ...origin(1, 1) }));
    view.show(item({ type: 'messageStart', model: 'm', ...origin(2, 0) }));
    view.show(item({ type: 'textDelta', text: 'The answer ', ...origin(2, 1) }));
    view.show(item({ type: 'textDelta', text: 'is 42.', ...origin(2, 2) }));
    view.show(item({ type: 'messageEnd', toolCalls: [], ...origin(2, 3) }));
    view.show(
      item({
        type: 'turnEnd',
        result: { turn: 1, status: 'completed', reply: 'The answer is 42.' },
        ...origin(1, 1),
      }),
    );
    expect(text()).toBe(
      'agent> The answ\n↻ the model call failed; retrying (attempt 2), its text starts over\nagent> The answer is 42.\n',
    );
  });

  it('prints tool start, progress and end lines, and a failed turn’s reason', () => {
    const { output, text } = captured();
    const view = new TurnView({ output, interactive: false, askApproval: async () => true });
    const tool = { toolCallId: 'c1', toolName: 'lookup' };
    view.show(item({ type: 'toolStart', ...tool, summary: 'lookup(city: "Oslo")', ...origin(1, 0) }));
    view.show(
      item({ type: 'toolProgress', ...tool, partialResult: { step: 1, status: 'radar' }, ...origin(1, 1) }),
    );
    view.show(
      item({ type: 'toolEnd', ...tool, isError: true, text: 'Tool "lookup" failed: down', ...origin(1, 2) }),
    );
    view.show(
      item({
        type: 'turnEnd',
        result: { turn: 1, status: 'failed', reply: '', error: 'The model call failed: 500' },
        ...origin(1, 0),
      }),
    );
    expect(text()).toBe(
      [
        '  ⚙ lookup(city: "Oslo")',
        '  … lookup: step: 1, status: radar',
        '  ✗ lookup: Tool "lookup" failed: down',
        'agent! The model call failed: 500',
        '',
      ].join('\n'),
    );
  });
});
