import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TurnView, type TurnViewOptions } from '../../src/cli/turnView.ts';
import type { PendingApproval } from '../../src/contract/types/approvals.ts';
import type { ConversationEvent, ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';

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

/** A piped view whose answers are sent nowhere, with `overrides` on top. */
function pipedView(output: Writable, overrides: Partial<TurnViewOptions> = {}): TurnView {
  return new TurnView({
    output,
    interactive: false,
    askApproval: async () => true,
    decide: async () => {},
    readResults: async () => [],
    ...overrides,
  });
}

let offset = 0;
const item = (event: ConversationEvent): ConversationEventItem => ({ ...event, offset: offset++ });
const origin = (attempt: number, seq: number) => ({ turn: 1, attempt, seq });

describe('the chat view of a conversation’s events (as piped, without a terminal)', () => {
  it('marks a retried model call and starts its text over on a new line', () => {
    const { output, text } = captured();
    const view = pipedView(output);
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

  it('marks a retried model call whose lost attempt had ended its text, so no reply reads as printed twice', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    view.show(item({ type: 'turnStart', ...origin(1, 0) }));
    view.show(item({ type: 'messageStart', model: 'm', ...origin(1, 0) }));
    view.show(item({ type: 'textDelta', text: 'The answer is 42.', ...origin(1, 1) }));
    // Published live, then the attempt's result was lost (its server went away): Temporal retries it.
    view.show(item({ type: 'messageEnd', toolCalls: [], ...origin(1, 2) }));
    view.show(item({ type: 'messageStart', model: 'm', ...origin(2, 0) }));
    view.show(item({ type: 'textDelta', text: 'The answer is 42.', ...origin(2, 1) }));
    view.show(item({ type: 'messageEnd', toolCalls: [], ...origin(2, 2) }));
    expect(text()).toBe(
      'agent> The answer is 42.\n↻ the model call failed; retrying (attempt 2), its text starts over\nagent> The answer is 42.\n',
    );
  });

  it('says nothing of a retry whose failed attempt printed no text', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    view.show(item({ type: 'turnStart', ...origin(1, 0) }));
    view.show(item({ type: 'messageStart', model: 'm', ...origin(2, 0) }));
    view.show(item({ type: 'textDelta', text: 'Hello.', ...origin(2, 1) }));
    view.show(item({ type: 'messageEnd', toolCalls: [], ...origin(2, 2) }));
    expect(text()).toBe('agent> Hello.\n');
  });

  it('prints tool start, progress and end lines, and a failed turn’s reason', () => {
    const { output, text } = captured();
    const view = pipedView(output);
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

  it('draws the running tools in the order the model asked for them, whichever started first', () => {
    const { output, text } = captured();
    const view = new TurnView({
      output,
      interactive: true,
      askApproval: async () => true,
      decide: async () => {},
      readResults: async () => [],
    });
    const calls = [
      { id: 'c1', name: 'survey' },
      { id: 'c2', name: 'lookup' },
    ];
    view.show(item({ type: 'messageEnd', toolCalls: calls, ...origin(1, 0) }));
    view.show(
      item({ type: 'toolStart', toolCallId: 'c2', toolName: 'lookup', summary: 'lookup()', ...origin(1, 0) }),
    );
    view.show(
      item({ type: 'toolStart', toolCallId: 'c1', toolName: 'survey', summary: 'survey()', ...origin(1, 0) }),
    );
    view.stop();
    expect(text().split('\r\x1b[2K').filter(Boolean)).toEqual(['⠋ lookup()', '⠙ survey()  |  lookup()']);
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
      const view = pipedView(output, {
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
        '? pay({"to":"a"}) needs your approval: Pay requires approval [approval tool-1-a]\n  approved pay\n',
      );
    });

    it('does not ask about one that was resolved before its question came up', async () => {
      const { output } = captured();
      const asked: string[] = [];
      let answer: (approved: boolean) => void = () => {};
      const view = pipedView(output, {
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

    it('closes the question when the call is approved elsewhere, says so, and sends no answer of its own', async () => {
      const { output, text } = captured();
      const decided: boolean[] = [];
      let withdrawnSeen = false;
      const view = pipedView(output, {
        askApproval: (_approval, withdrawn) =>
          new Promise((resolve) => {
            withdrawn.addEventListener('abort', () => {
              withdrawnSeen = true;
              resolve(null);
            });
          }),
        decide: async (_approval, approved) => {
          decided.push(approved);
        },
      });
      view.show(item({ type: 'approvalRequested', approval: waiting('a'), ...origin(1, 0) }));
      await settled();
      const outcome = {
        approvalId: 'tool-1-a',
        toolCallId: 'a',
        approved: true,
        decidedBy: 'person' as const,
      };
      view.show(item({ type: 'approvalResolved', outcome, ...origin(1, 1) }));
      await settled();
      expect(withdrawnSeen).toBe(true);
      expect(decided).toEqual([]);
      expect(text()).toContain('  approved pay elsewhere (by another client, e.g. yiem approve)\n');
      expect(text()).not.toContain('denied');
    });

    it('says the answer came too late when the call was settled while it was being sent', async () => {
      const { output, text } = captured();
      const outcome = {
        approvalId: 'tool-1-a',
        toolCallId: 'a',
        approved: true,
        decidedBy: 'person' as const,
      };
      const view: TurnView = pipedView(output, {
        askApproval: async () => false,
        decide: async () => {
          view.show(item({ type: 'approvalResolved', outcome, ...origin(1, 1) }));
          throw new Error('no call waits with approval id tool-1-a');
        },
      });
      view.show(item({ type: 'approvalRequested', approval: waiting('a'), ...origin(1, 0) }));
      await settled();
      expect(text()).toContain(
        '  approved pay elsewhere (by another client, e.g. yiem approve); your answer came too late\n',
      );
      expect(text()).not.toContain('denied pay\n');
    });
  });
});

describe('tool calls no event settles', () => {
  const result = (toolCallId: string, toolName: string, text: string): ToolResultMessage => ({
    role: 'toolResult',
    toolCallId,
    toolName,
    content: [{ type: 'text', text }],
    details: {},
    isError: true,
    timestamp: 0,
  });

  it('prints the results of calls answered in PREPARE when the next model call starts', async () => {
    const { output, text } = captured();
    const asked: string[][] = [];
    const view = pipedView(output, {
      readResults: async (calls) => {
        asked.push(calls.map((call) => call.id));
        return [result('c2', 'nosuch', 'Tool "nosuch" not found')];
      },
    });
    const show = async (event: ConversationEventItem) => {
      await view.settle(event);
      view.show(event);
    };
    await show(
      item({
        type: 'messageEnd',
        toolCalls: [
          { id: 'c1', name: 'lookup' },
          { id: 'c2', name: 'nosuch' },
        ],
        ...origin(1, 0),
      }),
    );
    await show(
      item({ type: 'toolStart', toolCallId: 'c1', toolName: 'lookup', summary: 'lookup()', ...origin(1, 0) }),
    );
    await show(
      item({
        type: 'toolEnd',
        toolCallId: 'c1',
        toolName: 'lookup',
        isError: false,
        willRetry: false,
        text: 'found',
        ...origin(1, 1),
      }),
    );
    await show(item({ type: 'messageStart', model: 'm', ...origin(1, 0) }));
    expect(asked).toEqual([['c2']]);
    expect(text()).toBe('  ⚙ lookup()\n  ✓ lookup: found\n  ✗ nosuch: Tool "nosuch" not found\n');
  });

  it('marks an attempt that follows a lost one as a retry', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    const tool = { toolCallId: 'c1', toolName: 'step', summary: 'step()' };
    view.show(item({ type: 'toolStart', ...tool, ...origin(1, 0) }));
    view.show(item({ type: 'toolProgress', ...tool, partialResult: { step: 3 }, ...origin(1, 1) }));
    view.show(item({ type: 'toolStart', ...tool, ...origin(2, 0) }));
    expect(text()).toBe(
      [
        '  ⚙ step()',
        '  … step: step: 3',
        '  ↻ step: attempt 2 (the previous attempt ended without a result: its worker stopped or timed out)',
        '  ⚙ step() (attempt 2)',
        '',
      ].join('\n'),
    );
  });

  it('marks an at-most-once call whose outcome is unknown with a ?', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    const tool = { toolCallId: 'c1', toolName: 'pay', summary: 'pay()' };
    view.show(item({ type: 'toolStart', ...tool, ...origin(2, 0) }));
    const unknown = 'Tool "pay" outcome unknown: the call may or may not have taken effect';
    view.show(
      item({
        type: 'toolEnd',
        ...tool,
        isError: true,
        willRetry: false,
        text: unknown,
        outcome: 'unknown',
        ...origin(2, 1),
      }),
    );
    expect(text()).toBe(
      [
        '  ↻ pay: attempt 2 (the previous attempt ended without a result: its worker stopped or timed out)',
        '  ⚙ pay() (attempt 2)',
        `  ? pay: ${unknown}`,
        '',
      ].join('\n'),
    );
  });

  it('does not draw again the events of a turn it drew from its result', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    view.fallback({ turn: 1, status: 'completed', reply: 'Hello.' });
    view.show(item({ type: 'textDelta', text: 'Hello.', ...origin(1, 0) }));
    view.show(
      item({ type: 'turnEnd', result: { turn: 1, status: 'completed', reply: 'Hello.' }, ...origin(1, 1) }),
    );
    expect(text()).toBe('agent> Hello.\n');
  });

  it('shows a guardrail that rewrote the streamed reply, then the reply as rewritten; a trip as the turn’s end', () => {
    const { output, text } = captured();
    const view = pipedView(output);
    view.show(item({ type: 'turnStart', ...origin(1, 0) }));
    view.show(item({ type: 'textDelta', text: 'Call 555-0100.', ...origin(1, 0) }));
    view.show(item({ type: 'messageEnd', toolCalls: [], ...origin(1, 1) }));
    view.show(item({ type: 'guardrailRewrote', stage: 'output', guardrail: 'noPhones', ...origin(1, 2) }));
    view.show(
      item({
        type: 'turnEnd',
        result: { turn: 1, status: 'completed', reply: 'Call [phone].' },
        ...origin(1, 3),
      }),
    );
    const trip = { stage: 'input', guardrail: 'noPasswords', reason: 'a password' } as const;
    view.show(item({ type: 'turnStart', turn: 2, attempt: 1, seq: 0 }));
    view.show(item({ type: 'guardrailTripped', ...trip, turn: 2, attempt: 1, seq: 1 }));
    view.show(
      item({
        type: 'turnEnd',
        result: {
          turn: 2,
          status: 'guardrailTripped',
          reply: '',
          error: 'The input guardrail "noPasswords" tripped on the user\'s message: a password',
          guardrail: trip,
        },
        turn: 2,
        attempt: 1,
        seq: 2,
      }),
    );
    expect(text()).toBe(
      [
        'agent> Call 555-0100.',
        "  ✎ guardrail noPhones rewrote the model's reply",
        'agent> Call [phone].',
        'agent! The input guardrail "noPasswords" tripped on the user\'s message: a password',
        '',
      ].join('\n'),
    );
  });
});
