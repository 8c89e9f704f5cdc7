import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_STATUS,
  YIEM_TURNS,
} from '../src/contract/searchAttributes.ts';

/**
 * Keeps `YiemStatus` and `YiemTurns` current, upserting only the attributes that changed (the client
 * starts a conversation as `idle` at turn 0, and a new run starts with the last run's values). Only
 * conversations the client started with `YiemAgent` set do so: that proves the namespace has the
 * attributes registered, and a namespace without them would fail every workflow task that upserted them.
 */
export function searchAttributeUpdater(): (status: ConversationSearchStatus, turns: number) => void {
  const attributes = workflowInfo().typedSearchAttributes;
  const enabled = attributes.get(YIEM_AGENT) !== undefined;
  let lastStatus = attributes.get(YIEM_STATUS);
  let lastTurns = attributes.get(YIEM_TURNS);
  return (status, turns) => {
    if (!enabled) return;
    const changed: SearchAttributeUpdatePair[] = [];
    if (status !== lastStatus) changed.push({ key: YIEM_STATUS, value: status });
    if (turns !== lastTurns) changed.push({ key: YIEM_TURNS, value: turns });
    if (changed.length === 0) return;
    lastStatus = status;
    lastTurns = turns;
    upsertSearchAttributes(changed);
  };
}
