import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_COST,
  YIEM_STATUS,
  YIEM_TURNS,
} from '../src/contract/searchAttributes.ts';
import { countActions } from './actionMeter.ts';
import { BUDGETS_PATCH, type TurnControl } from './turnControl.ts';

/**
 * Keeps `YiemStatus`, `YiemTurns` and `YiemCost` current, upserting only the attributes that changed
 * (the client starts a conversation as `idle` at turn 0, and a new run starts with the last run's
 * values) whenever the status is set. Only conversations the client started with `YiemAgent` and
 * `YiemStatus` set do so, and `YiemCost` only when it was set too: that proves the namespace has
 * the attributes registered, and a namespace without them would fail every workflow task that
 * upserted them. A paused conversation shows `paused` between turns (`control.shownStatus`).
 */
export function searchAttributeUpdater(
  control: TurnControl,
): (status: ConversationSearchStatus, turns: number) => void {
  const attributes = workflowInfo().typedSearchAttributes;
  // A conversation started with `liveSearchAttributes: false` has `YiemAgent` without `YiemStatus`.
  const enabled = attributes.get(YIEM_AGENT) !== undefined && attributes.get(YIEM_STATUS) !== undefined;
  let lastStatus = attributes.get(YIEM_STATUS);
  let lastTurns = attributes.get(YIEM_TURNS);
  let lastCost = attributes.get(YIEM_COST);
  return (status, turns) => {
    if (!enabled) return;
    const shown = control.shownStatus(status);
    const { cost } = control.spend;
    const changed: SearchAttributeUpdatePair[] = [];
    if (shown !== lastStatus) changed.push({ key: YIEM_STATUS, value: shown });
    if (turns !== lastTurns) changed.push({ key: YIEM_TURNS, value: turns });
    // Histories from before budgets upsert no cost; a cost is only spent with a price table.
    if (lastCost !== undefined && cost !== lastCost && patched(BUDGETS_PATCH)) {
      changed.push({ key: YIEM_COST, value: cost });
      lastCost = cost;
    }
    if (changed.length === 0) return;
    lastStatus = shown;
    lastTurns = turns;
    upsertSearchAttributes(changed);
    countActions();
  };
}
