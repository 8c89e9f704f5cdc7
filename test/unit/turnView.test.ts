import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TurnView } from '../../src/cli/turnView.ts';
import type { ConversationEvent, ConversationEventItem, PendingApproval } from '../../src/contract/types.ts';

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
      item({
        type: 'toolEnd',
        ...tool,
        isError: true,
        willRetry: true,
        text: 'Tool "lookup" failed: busy',
        ...origin(1, 2),
      }),
    );
    view.show(
      item({
        type: 'toolEnd',
        ...tool,
        isError: true,
        willRetry: false,
        text: 'Tool "lookup" failed: down',
        ...origin(2, 0),
      }),
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
        '  ↻ lookup: Tool "lookup" failed: busy (trying again)',
        '  ✗ lookup: Tool "lookup" failed: down',
        'agent! The model call failed: 500',
        '',
      ].join('\n'),
    );
  });

  describe('approvals already waiting when the chat attached', () => {
    const waiting = (toolCallId: string, turn = 1): PendingApproval => ({
      approvalId: `tool-${turn}-${toolCallId}`,
      turn,
      toolCallId,
      toolName: 'pay',
      args: { to: toolCallId },
      reason: 'Pay requires approval',
      requestedAt: 0,
    });
    const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

    it('asks about each once, even when the event stream delivers its request too', async () => {
      const { output, text } = captured();
      const asked: string[] = [];
      const view = new TurnView({
        output,
        interactive: false,
        askApproval: async (approval) => {
          asked.push(`${approval.turn}:${approval.toolCallId}`);
          return true;
        },
      });
      view.askPending([waiting('a'), waiting('b')]);
      view.show(item({ type: 'approvalRequested', approval: waiting('b'), ...origin(1, 0) }));
      view.show(item({ type: 'approvalRequested', approval: waiting('c'), ...origin(1, 1) }));
      // The same id in a later turn is another tool call.
      view.show(item({ type: 'approvalRequested', approval: waiting('a', 2), ...origin(1, 2) }));
      await settled();
      expect(asked).toEqual(['1:a', '1:b', '1:c', '2:a']);
      expect(text()).toContain(
        '? pay({"to":"a"}) needs your approval: Pay requires approval\n  approved pay\n',
      );
    });

    it('does not ask about one that was resolved before its question came up', async () => {
      const { output } = captured();
      const asked: string[] = [];
      let answer: (approved: boolean) => void = () => {};
      const view = new TurnView({
        output,
        interactive: false,
        askApproval: (approval) => {
          asked.push(approval.toolCallId);
          return new Promise((resolve) => {
            answer = resolve;
          });
        },
      });
      view.askPending([waiting('a'), waiting('b')]);
      await settled();
      const outcome = {
        approvalId: 'tool-1-b',
        toolCallId: 'b',
        approved: false,
        decidedBy: 'timeout' as const,
      };
      view.show(item({ type: 'approvalResolved', outcome, ...origin(1, 0) }));
      answer(true);
      await settled();
      expect(asked).toEqual(['a']);
    });
  });
});
