import type { Duration } from '@temporalio/common';
import { CancellationScope, condition, patched, sleep } from '@temporalio/workflow';
import { TIMER_SUMMARY_CHARS } from '../src/contract/limits.ts';
import { truncate } from '../src/contract/truncate.ts';
import { countActions } from './actionMeter.ts';

/**
 * The patch behind the timers that make the Web UI read like the conversation: a wait for approval
 * without a timeout, and the rows of calls that never ran. Histories recorded before it replay
 * without them.
 */
const NAMED_WAITS_PATCH = 'yiem-named-waits';

/** Longest timer of a wait that has no timeout of its own; a wait that outlasts it starts another. */
const OPEN_WAIT = '365 days';

/** How long a row for a call that never ran lasts: a timer is the cheapest row the UI names. */
const CALL_ROW = 1;

/** A timer's summary: one line, short enough for the timeline. */
export function timerSummary(text: string): string {
  return truncate(text.replace(/\s+/g, ' ').trim(), TIMER_SUMMARY_CHARS);
}

/**
 * Waits until `done`, shown as a timer named `summary` that ends when the wait does. With a
 * `timeout`, it is the wait's own timeout: returns false when it passed. Without one, it is a long
 * timer started again until `done` (histories from before the patch waited with no timer).
 */
export async function namedWait(done: () => boolean, summary: string, timeout?: Duration): Promise<boolean> {
  const options = { summary: timerSummary(summary) };
  if (timeout) {
    // A condition already met starts no timer.
    if (!done()) countActions();
    return condition(done, timeout, options);
  }
  if (!patched(NAMED_WAITS_PATCH)) {
    await condition(done);
    return true;
  }
  while (!done()) {
    countActions();
    if (await condition(done, OPEN_WAIT, options)) break;
  }
  return true;
}

/**
 * A timeline row for a tool call that never ran (blocked in PREPARE, denied): a 1 ms timer named
 * after it, one Action. Not awaited, so it delays nothing, and not cancellable, so a cancelled turn
 * keeps its rows.
 */
export function markCall(summary: string): void {
  if (!patched(NAMED_WAITS_PATCH)) return;
  countActions();
  void CancellationScope.nonCancellable(() => sleep(CALL_ROW, { summary: timerSummary(summary) }));
}
