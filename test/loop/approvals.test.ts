import { afterAll, beforeAll, describe, it } from 'vitest';
import { type LoopHarness, startLoopHarness, type ToolDouble, textOf } from '../support/loopHarness.ts';

/** A tool every call of which waits for a person first. */
const pay: ToolDouble = {
  approval: 'Pay requires approval',
  run: ({ args }) => `Paid ${String(args.amount)} to ${String(args.to)}`,
};
const lookup: ToolDouble = {};
const exclusive: ToolDouble = { parallel: false };

// Each test has a conversation of its own, so they run concurrently (with the test's own `expect`).
describe.concurrent('tool calls that wait for approval', () => {
  let loop: LoopHarness;
  beforeAll(async () => {
    loop = await startLoopHarness();
  });
  afterAll(async () => loop?.close());

  it('waits for a person; once approved the tool runs and the turn goes on', async ({ expect }) => {
    const conversation = await loop.start({
      tools: { pay },
      model: [{ calls: [{ id: 'p', name: 'pay', args: { to: 'Ana', amount: 100 } }] }, { reply: 'Sent.' }],
    });
    const turn = conversation.prompt('Pay Ana 100');
    const [waiting] = await conversation.approvalsWaiting(1);
    expect(waiting).toMatchObject({
      approvalId: 'tool-1-p',
      turn: 1,
      toolCallId: 'p',
      toolName: 'pay',
      args: { to: 'Ana', amount: 100 },
      reason: 'Pay requires approval',
    });
    expect(waiting).not.toHaveProperty('expiresAt');
    expect(await conversation.status()).toMatchObject({ state: 'running' });
    expect(conversation.log.entries).toEqual([]);

    expect(await conversation.decide('tool-1-p', true)).toEqual({
      approvalId: 'tool-1-p',
      toolCallId: 'p',
      approved: true,
      decidedBy: 'person',
    });
    expect(await turn).toMatchObject({ turn: 1, status: 'completed', reply: 'Sent.' });
    expect(conversation.log.entries).toEqual(['start:p', 'end:p']);
    expect((await conversation.toolResults()).map(textOf)).toEqual(['Paid 100 to Ana']);
    expect((await conversation.status()).pendingApprovals).toEqual([]);

    // Tool events are left out: which side publishes them is not what this test is about.
    const events = (await conversation.eventsThroughTurn(1)).filter((e) => !e.type.startsWith('tool'));
    expect(events.map((e) => e.type)).toEqual([
      'turnStart',
      'approvalRequested',
      'approvalResolved',
      'turnEnd',
    ]);
    expect(events[1]).toMatchObject({ approval: { approvalId: 'tool-1-p', toolName: 'pay' } });
    expect(events[2]).toMatchObject({
      outcome: { approvalId: 'tool-1-p', approved: true, decidedBy: 'person' },
    });
  });

  it('on deny never runs the tool and gives the model an error result with the reason', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      tools: { pay },
      model: [
        {
          calls: [
            { id: 'p1', name: 'pay', args: { to: 'Bo', amount: 5 } },
            { id: 'p2', name: 'pay', args: { to: 'Cy', amount: 6 } },
          ],
        },
        { reply: 'Nothing sent.' },
      ],
    });
    const turn = conversation.prompt('Pay Bo and Cy');
    await conversation.approvalsWaiting(2);
    // Answered by tool call id while no other waiting call has it.
    expect(await conversation.decide('p1', false, 'Bo is not a customer')).toMatchObject({
      approvalId: 'tool-1-p1',
      approved: false,
      reason: 'Bo is not a customer',
    });
    await conversation.decide('p2', false);
    expect(await turn).toMatchObject({ status: 'completed', reply: 'Nothing sent.' });
    expect(conversation.log.entries).toEqual([]);
    const results = await conversation.toolResults();
    expect(results.map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['p1', true, 'Tool call "pay" was denied by the user: Bo is not a customer'],
      ['p2', true, 'Tool call "pay" was denied by the user'],
    ]);
    expect(conversation.modelCalls[1]?.seen.slice(-2)).toEqual(results);
  });

  it('applies the timeout policy when nobody answers: deny by default, or approve', async ({ expect }) => {
    const call = { calls: [{ id: 'late', name: 'pay', args: { to: 'Di', amount: 3 } }] };
    const [denied, approved] = await Promise.all([
      loop.start({
        options: { approvalTimeout: '1 second' },
        tools: { pay },
        model: [call, { reply: 'Nobody approved.' }],
      }),
      loop.start({
        options: { approvalTimeout: '1 second', onApprovalTimeout: 'approve' },
        tools: { pay },
        model: [call, { reply: 'Paid.' }],
      }),
    ]);
    const [deniedTurn, approvedTurn] = [denied.prompt('Pay Di 3'), approved.prompt('Pay Di 3')];
    const [waiting] = await denied.approvalsWaiting(1);
    expect(waiting?.expiresAt).toBe((waiting?.requestedAt ?? 0) + 1_000);

    expect(await deniedTurn).toMatchObject({ status: 'completed', reply: 'Nobody approved.' });
    expect(denied.log.entries).toEqual([]);
    expect((await denied.toolResults()).map(textOf)).toEqual([
      'Tool call "pay" was denied: approval timed out (nobody answered within 1 second)',
    ]);
    expect(await approvedTurn).toMatchObject({ status: 'completed', reply: 'Paid.' });
    expect((await approved.toolResults()).map(textOf)).toEqual(['Paid 3 to Di']);
    const resolved = (await approved.eventsThroughTurn(1)).find((e) => e.type === 'approvalResolved');
    expect(resolved).toMatchObject({
      outcome: { approved: true, decidedBy: 'timeout', reason: 'nobody answered within 1 second' },
    });
  });

  it('in parallel mode a waiting call holds up the groups after it, not the calls beside it', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: { pay, lookup, exclusive },
      model: [
        {
          calls: [
            { id: 'p', name: 'pay', args: { to: 'Ed', amount: 1 } },
            { id: 'l', name: 'lookup' },
            { id: 'x', name: 'exclusive' },
          ],
        },
        { reply: 'Done.' },
      ],
    });
    const turn = conversation.prompt('go');
    await conversation.approvalsWaiting(1);
    // The lookup beside the waiting call runs at once; the exclusive call after their group waits.
    expect(await conversation.log.waitFor('end:l')).toBe(true);
    expect(conversation.log.entries).toEqual(['start:l', 'end:l']);
    await conversation.decide('p', true);
    expect(await turn).toMatchObject({ status: 'completed' });
    expect(conversation.log.entries).toEqual(['start:l', 'end:l', 'start:p', 'end:p', 'start:x', 'end:x']);
    expect((await conversation.toolResults()).map((r) => r.toolCallId)).toEqual(['p', 'l', 'x']);
  });

  it('in sequential mode the calls after a waiting one wait too', async ({ expect }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'sequential' },
      tools: { pay, lookup },
      model: [
        {
          calls: [
            { id: 'l1', name: 'lookup' },
            { id: 'p', name: 'pay', args: { to: 'Fa', amount: 2 } },
            { id: 'l2', name: 'lookup' },
          ],
        },
        { reply: 'Done.' },
      ],
    });
    const turn = conversation.prompt('go');
    await conversation.approvalsWaiting(1);
    expect(conversation.log.entries).toEqual(['start:l1', 'end:l1']);
    await conversation.decide('p', true);
    expect(await turn).toMatchObject({ status: 'completed' });
    expect(conversation.log.entries).toEqual([
      'start:l1',
      'end:l1',
      'start:p',
      'end:p',
      'start:l2',
      'end:l2',
    ]);
  });

  it('cancelling the turn settles a waiting approval as cancelled; the next prompt works', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      tools: { pay },
      model: [{ calls: [{ id: 'p', name: 'pay', args: { to: 'Gil', amount: 9 } }] }, { reply: 'Fine.' }],
    });
    const turn = conversation.prompt('Pay Gil 9');
    await conversation.approvalsWaiting(1);
    expect(await conversation.cancel()).toBe(true);
    expect(await turn).toMatchObject({ turn: 1, status: 'cancelled' });
    expect((await conversation.status()).pendingApprovals).toEqual([]);
    expect((await conversation.toolResults()).map(textOf)).toEqual([
      'Tool "pay" was cancelled before it finished.',
    ]);
    const resolved = (await conversation.eventsThroughTurn(1)).find((e) => e.type === 'approvalResolved');
    expect(resolved).toMatchObject({
      outcome: { approvalId: 'tool-1-p', approved: false, decidedBy: 'cancelled' },
    });
    // A late decision finds nothing waiting.
    await expect(conversation.decide('tool-1-p', true)).rejects.toMatchObject({
      cause: { message: 'No tool call "tool-1-p" is waiting for approval (waiting: none)' },
    });
    expect(conversation.log.entries).toEqual([]);
    expect(await conversation.prompt('never mind')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'Fine.',
    });
  });

  it('keeps apart two waiting calls with one tool call id: each is answered by its approval id', async ({
    expect,
  }) => {
    const conversation = await loop.start({
      options: { toolExecution: 'parallel' },
      tools: { pay },
      model: [
        {
          calls: [
            { id: 'dup', name: 'pay', args: { to: 'Ana', amount: 1 } },
            { id: 'dup', name: 'pay', args: { to: 'Bo', amount: 2 } },
          ],
        },
        { reply: 'One sent.' },
      ],
    });
    const turn = conversation.prompt('Pay Ana 1 and Bo 2');
    const waiting = await conversation.approvalsWaiting(2);
    expect(waiting.map((a) => [a.approvalId, a.args.to])).toEqual([
      ['tool-1-dup', 'Ana'],
      ['tool-1-dup-2', 'Bo'],
    ]);
    await expect(conversation.decide('dup', true)).rejects.toMatchObject({
      cause: {
        message:
          'Several calls with tool call id "dup" are waiting; answer one by its approval id: tool-1-dup, tool-1-dup-2',
      },
    });
    await conversation.decide('tool-1-dup-2', false, 'not Bo');
    await conversation.decide('tool-1-dup', true);
    expect(await turn).toMatchObject({ status: 'completed', reply: 'One sent.' });
    expect((await conversation.toolResults()).map(textOf)).toEqual([
      'Paid 1 to Ana',
      'Tool call "pay" was denied by the user: not Bo',
    ]);
  });
});
