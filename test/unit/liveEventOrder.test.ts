import { describe, expect, it } from 'vitest';
import { LiveEventOrder } from '../../src/client/liveEvents.ts';
import type { LiveEntry } from '../../src/contract/protocol.ts';
import type { ConversationEvent } from '../../src/contract/types/events.ts';

const turnStart: ConversationEvent = { type: 'turnStart', turn: 1, attempt: 1, seq: 0 };
const messageStart: ConversationEvent = { type: 'messageStart', model: 'm', turn: 1, attempt: 1, seq: 0 };
const delta = (text: string, seq: number): ConversationEvent => ({
  type: 'textDelta',
  text,
  turn: 1,
  attempt: 1,
  seq,
});
const messageEnd: ConversationEvent = { type: 'messageEnd', toolCalls: [], turn: 1, attempt: 1, seq: 3 };

const logged = (offset: number, event: ConversationEvent, origin?: string): LiveEntry => ({
  kind: 'logged',
  offset,
  event,
  ...(origin ? { origin } : {}),
});
const preview = (index: number, event: ConversationEvent, after = 1): LiveEntry => ({
  kind: 'preview',
  origin: '2/1',
  index,
  event,
  after,
});

/** What a follower yields: type, text and offset. */
function shown(order: LiveEventOrder) {
  return order
    .take()
    .map((item) => [item.type, item.type === 'textDelta' ? item.text : '', item.offset, item.live ?? false]);
}

describe('the order a live-channel follower yields events in', () => {
  it('yields logged events by offset, holding a later one until the gap is filled', () => {
    const order = new LiveEventOrder(0);
    order.add([logged(1, messageStart)]);
    expect(shown(order)).toEqual([]);
    expect(order.waitingSince(1_000)).toBe(0);
    expect(order.waitingSince(1_600)).toBe(600);
    order.addPage({ items: [{ offset: 0, event: turnStart }], next: 1 });
    expect(shown(order)).toEqual([
      ['turnStart', '', 0, false],
      ['messageStart', '', 1, false],
    ]);
    expect(order.next).toBe(2);
  });

  it("shows a call's previews after the log's events before it, and of its logged copy only what they had not shown", () => {
    const order = new LiveEventOrder(0);
    order.add([preview(0, messageStart), preview(1, delta('Hello, ', 1))]);
    expect(shown(order)).toEqual([]);
    order.add([logged(0, turnStart)]);
    expect(shown(order)).toEqual([
      ['turnStart', '', 0, false],
      ['messageStart', '', 0, true],
      ['textDelta', 'Hello, ', 0, true],
    ]);
    // Written again for a follower who came since: nothing new here.
    order.add([preview(0, messageStart), preview(1, delta('Hello, ', 1))]);
    expect(shown(order)).toEqual([]);
    // The result: the whole text in one delta, and the end nobody previewed.
    order.add([
      logged(1, messageStart, '2/1'),
      logged(2, delta('Hello, world.', 1), '2/1'),
      logged(3, messageEnd, '2/1'),
    ]);
    expect(shown(order)).toEqual([
      ['textDelta', 'world.', 2, false],
      ['messageEnd', '', 3, false],
    ]);
  });

  it("ignores a call's previews that begin after its first event, and yields its logged copy whole", () => {
    const order = new LiveEventOrder(1);
    order.add([preview(1, delta('late', 1))]);
    order.add([logged(1, messageStart, '2/1'), logged(2, delta('late text', 1), '2/1')]);
    expect(shown(order)).toEqual([
      ['messageStart', '', 1, false],
      ['textDelta', 'late text', 2, false],
    ]);
  });

  it("knows a call's logged copy read by query, without its origin, after an outage, and still shows the turn's next call", () => {
    const order = new LiveEventOrder(0);
    order.add([logged(0, turnStart), preview(0, messageStart), preview(1, delta('Hello, ', 1))]);
    expect(shown(order)).toEqual([
      ['turnStart', '', 0, false],
      ['messageStart', '', 0, true],
      ['textDelta', 'Hello, ', 0, true],
    ]);
    // Temporal was down while the call finished; the follower catches up by query once it is back.
    const nextCall = { ...messageStart, seq: 4 };
    order.addPage({
      items: [
        { offset: 1, event: messageStart },
        { offset: 2, event: delta('Hello, world.', 1) },
        { offset: 3, event: messageEnd },
        { offset: 4, event: nextCall },
        { offset: 5, event: delta('Hello, ', 5) },
      ],
      next: 6,
    });
    expect(shown(order)).toEqual([
      ['textDelta', 'world.', 2, false],
      ['messageEnd', '', 3, false],
      ['messageStart', '', 4, false],
      ['textDelta', 'Hello, ', 5, false],
    ]);
  });

  it('goes on from the oldest event a trimmed log still has, as a poll does', () => {
    const order = new LiveEventOrder(0);
    order.addPage({ items: [{ offset: 5, event: turnStart }], next: 6 });
    expect(shown(order)).toEqual([['turnStart', '', 5, false]]);
  });
});
